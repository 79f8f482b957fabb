import FerryCore
import Foundation

/// The columns both stores select for a job, in this order (`SQLiteJobRow.columns`, `PostgresJobRow.selectColumns`):
/// a column's position in a selected row is its raw value.
enum JobColumn: Int, CaseIterable {
    case id, sequence, state, dedupeKey, url, finalURL, filename, requestedFilename
    case bytesReceived, bytesExpected, contentType, sha256, checksum
    case errorCode, errorMessage, errorHTTPStatus, attempts, priority, maxBytesPerSecond
    case connections, headers, etag, lastModified
    case createdAt, startedAt, finishedAt, updatedAt, tags, notify, delivery
    case sources, follows, ownerKey

    /// Its name in the schema (for error messages).
    var name: String { SQLiteJobRow.columns[rawValue] }
}

/// One selected job row as a store reads it: text and integers by position, and dates in the store's own form
/// (SQLite: seconds as `REAL`; PostgreSQL: milliseconds).
protocol JobRowReading {
    func text(_ column: JobColumn) -> String?
    func integer(_ column: JobColumn) -> Int64?
    func date(_ column: JobColumn) -> Date?
}

/// Turns a selected row into a `JobRecord`, the same way for every store. Pure.
enum JobRowDecoding {
    /// The record in `row`.
    /// - Parameter strings: shares the storage of repeated URLs, dedupe keys and content types between the records
    ///   read with it (pass one interner per query).
    /// - Throws: `JobStoreError.corrupt` when a required column is NULL or holds something Ferry never writes.
    static func record<Row: JobRowReading>(_ row: Row, strings: inout StringInterner) throws -> JobRecord {
        guard let id = row.text(.id) else { throw JobStoreError.corrupt("a job row has a NULL id") }
        func need<T>(_ value: T?, _ column: JobColumn) throws -> T {
            guard let value else { throw JobStoreError.corrupt("job \(id): column \(column.name) is NULL") }
            return value
        }
        let stateText = try need(row.text(.state), .state)
        guard let state = JobState(rawValue: stateText) else {
            throw JobStoreError.corrupt("job \(id): unknown state \"\(stateText)\"")
        }
        guard let headers = SQLiteJobRow.decodeHeaders(try need(row.text(.headers), .headers)) else {
            throw JobStoreError.corrupt("job \(id): headers are not a JSON list of name/value pairs")
        }
        guard let tags = SQLiteJobRow.decodeTags(try need(row.text(.tags), .tags)) else {
            throw JobStoreError.corrupt("job \(id): tags are not a JSON list of strings")
        }
        let delivery = try SQLiteJobRow.decodeDocument(Delivery.self, row.text(.delivery), "job \(id): delivery is not a delivery object")
        let sources = try SQLiteJobRow.decodeDocument([JobSource].self, row.text(.sources), "job \(id): sources are not a list of sources")
        let error = row.text(.errorCode).map {
            JobFailure(code: FailureCode(rawValue: $0), message: row.text(.errorMessage) ?? "",
                       httpStatus: row.integer(.errorHTTPStatus).map { Int($0) })
        }
        var record = JobRecord(
            id: id,
            sequence: try need(row.integer(.sequence), .sequence),
            url: strings.intern(try need(row.text(.url), .url)),
            finalURL: row.text(.finalURL),
            state: state,
            filename: row.text(.filename),
            requestedFilename: row.text(.requestedFilename),
            bytesReceived: try need(row.integer(.bytesReceived), .bytesReceived),
            bytesExpected: row.integer(.bytesExpected),
            contentType: row.text(.contentType).map { strings.intern($0) },
            sha256: row.text(.sha256),
            checksum: try SQLiteJobRow.checksum(row.text(.checksum), id: id),
            error: error,
            attempts: Int(try need(row.integer(.attempts), .attempts)),
            priority: Int(try need(row.integer(.priority), .priority)),
            maxBytesPerSecond: row.integer(.maxBytesPerSecond),
            connections: row.integer(.connections).map { Int($0) },
            headers: headers,
            tags: tags,
            notify: row.text(.notify),
            delivery: delivery,
            sources: sources,
            follows: row.text(.follows),
            dedupeKey: strings.intern(try need(row.text(.dedupeKey), .dedupeKey)),
            etag: row.text(.etag),
            lastModified: row.text(.lastModified),
            createdAt: try need(row.date(.createdAt), .createdAt),
            startedAt: row.date(.startedAt),
            finishedAt: row.date(.finishedAt),
            updatedAt: try need(row.date(.updatedAt), .updatedAt)
        )
        if let owner = row.text(.ownerKey) { record.ownerKey = strings.intern(owner) }
        return record
    }
}
