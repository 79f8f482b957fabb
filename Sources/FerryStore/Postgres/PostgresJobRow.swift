import FerryCore
import Foundation

/// How a `JobRecord` maps to a row of the PostgreSQL `jobs` table: the select list, the insert and update
/// statements and their parameters, and reading a row back. Headers are JSON text (as `SQLiteJobRow` writes them),
/// tags a `text[]` read back as JSON, dates whole milliseconds. Pure mapping; runs on the store's queue.
enum PostgresJobRow {
    /// The columns written from a record, in parameter order (`$1` is `id`). `sequence` is the database's.
    private static let writtenColumns = [
        "id", "state", "dedupe_key", "url", "final_url", "filename", "requested_filename",
        "bytes_received", "bytes_expected", "content_type", "sha256", "checksum",
        "error_code", "error_message", "error_http_status", "attempts", "priority", "max_bytes_per_second",
        "connections", "headers", "etag", "last_modified",
        "created_at", "started_at", "finished_at", "updated_at", "tags", "notify", "search_text", "delivery",
        "sources", "follows", "owner_key",
    ]

    private static let dateColumns: Set<String> = ["created_at", "started_at", "finished_at", "updated_at"]

    /// The value expression for column `name` at parameter `index` (dates and tags converted).
    private static func valueExpression(_ name: String, _ index: Int) -> String {
        if dateColumns.contains(name) { return PostgresSQL.timestamp(index) }
        if name == "tags" { return "$\(index)::text[]" }
        return "$\(index)"
    }

    /// Inserts one job and returns its `sequence`.
    static let insertSQL: String = {
        let values = writtenColumns.enumerated().map { valueExpression($0.element, $0.offset + 1) }
        return "INSERT INTO jobs (\(writtenColumns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", "))) RETURNING sequence"
    }()

    /// Replaces everything but `id` and `sequence` of the job whose id is `$1`.
    static let updateSQL: String = {
        let assignments = writtenColumns.enumerated().dropFirst().map { "\($0.element) = \(valueExpression($0.element, $0.offset + 1))" }
        return "UPDATE jobs SET \(assignments.joined(separator: ", ")) WHERE id = $1"
    }()

    /// The SQL type a column's text is cast to in `updateManySQL` (`nil`: text; dates are milliseconds).
    private static func cast(_ name: String) -> String? {
        switch name {
        case "bytes_received", "bytes_expected", "max_bytes_per_second": "bigint"
        case "error_http_status", "attempts", "priority", "connections": "integer"
        case "tags": "text[]"
        default: nil
        }
    }

    /// Replaces everything but `id` and `sequence` of several jobs in one statement: `$N` is the `text[]` of column
    /// N's values, one element per job (`updateManyParameters`), turned back into rows by `unnest`.
    static let updateManySQL: String = {
        let names = writtenColumns.indices.map { "c\($0 + 1)" }
        let assignments = writtenColumns.enumerated().dropFirst().map { index, name in
            let value = "u.c\(index + 1)"
            if dateColumns.contains(name) { return "\(name) = 'epoch'::timestamptz + \(value)::bigint * interval '1 millisecond'" }
            return "\(name) = \(cast(name).map { "\(value)::\($0)" } ?? value)"
        }
        let arrays = writtenColumns.indices.map { "$\($0 + 1)::text[]" }
        return "UPDATE jobs SET \(assignments.joined(separator: ", ")) FROM unnest(\(arrays.joined(separator: ", "))) "
            + "AS u (\(names.joined(separator: ", "))) WHERE jobs.id = u.c1"
    }()

    /// The parameters of `updateManySQL` for `jobs` (already in their stored form): each column's values as one
    /// `text[]`, `tags` as the text of its own array literal.
    static func updateManyParameters(_ jobs: [JobRecord]) throws -> [PostgresParameter] {
        var columns = Array(repeating: [String?](), count: writtenColumns.count)
        for job in jobs {
            for (index, parameter) in try parameters(job).enumerated() {
                switch parameter {
                case .text(let text): columns[index].append(text)
                case .null: columns[index].append(nil)
                case .bytes: throw JobStoreError.corrupt("a job column \(writtenColumns[index]) is not text")
                }
            }
        }
        return columns.map { PostgresParameter.textArray($0) }
    }

    /// The select list, qualified with `jobs.` (lists join `job_tags`); read back by `JobColumn`.
    static let selectColumns: String = [
        "id", "sequence", "state", "dedupe_key", "url", "final_url", "filename", "requested_filename",
        "bytes_received", "bytes_expected", "content_type", "sha256", "checksum",
        "error_code", "error_message", "error_http_status", "attempts", "priority", "max_bytes_per_second",
        "connections", "headers", "etag", "last_modified",
    ].map { "jobs." + $0 }.joined(separator: ", ")
        + ", " + ["created_at", "started_at", "finished_at", "updated_at"].map { PostgresSQL.milliseconds("jobs." + $0) }
            .joined(separator: ", ")
        + ", array_to_json(jobs.tags)::text, jobs.notify, jobs.delivery, jobs.sources, jobs.follows, jobs.owner_key"

    /// The parameters of `insertSQL` and `updateSQL` for `job` (already in its stored form).
    static func parameters(_ job: JobRecord) throws -> [PostgresParameter] {
        func date(_ value: Date?) -> PostgresParameter { PostgresParameter(value.map(StoredDate.milliseconds)) }
        return [
            .text(job.id),
            .text(job.state.rawValue),
            .text(job.dedupeKey),
            .text(job.url),
            PostgresParameter(job.finalURL),
            PostgresParameter(job.filename),
            PostgresParameter(job.requestedFilename),
            PostgresParameter(job.bytesReceived),
            PostgresParameter(job.bytesExpected),
            PostgresParameter(job.contentType),
            PostgresParameter(job.sha256),
            PostgresParameter(job.checksum?.description),
            PostgresParameter(job.error?.code.rawValue),
            PostgresParameter(job.error?.message),
            PostgresParameter(job.error?.httpStatus),
            PostgresParameter(job.attempts),
            PostgresParameter(job.priority),
            PostgresParameter(job.maxBytesPerSecond),
            PostgresParameter(job.connections),
            .text(try SQLiteJobRow.encodeHeaders(job.headers)),
            PostgresParameter(job.etag),
            PostgresParameter(job.lastModified),
            date(job.createdAt),
            date(job.startedAt),
            date(job.finishedAt),
            date(job.updatedAt),
            PostgresParameter.textArray(job.tags),
            PostgresParameter(job.notify),
            .text(JobFilter.searchText(of: job)),
            PostgresParameter(try job.delivery.map { try SQLiteJobRow.encodeDocument($0, "a delivery") }),
            PostgresParameter(try job.sources.map { try SQLiteJobRow.encodeDocument($0, "sources") }),
            PostgresParameter(job.follows),
            PostgresParameter(job.ownerKey),
        ]
    }

    /// Every row of `result` (selected with `selectColumns`).
    static func records(from result: PostgresResult) throws -> [JobRecord] {
        var strings = StringInterner()
        var records: [JobRecord] = []
        records.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount { records.append(try record(from: result, row: row, strings: &strings)) }
        return records
    }

    /// The record in row `row`.
    /// - Throws: `JobStoreError.corrupt` when a required column is NULL or holds something Ferry never writes.
    static func record(from result: PostgresResult, row: Int, strings: inout StringInterner) throws -> JobRecord {
        try JobRowDecoding.record(Row(result: result, row: row), strings: &strings)
    }

    /// Row `row` of a result, read by position; dates are whole milliseconds.
    private struct Row: JobRowReading {
        let result: PostgresResult
        let row: Int
        func text(_ column: JobColumn) -> String? { result.string(row, column.rawValue) }
        func integer(_ column: JobColumn) -> Int64? { result.int64(row, column.rawValue) }
        func date(_ column: JobColumn) -> Date? { integer(column).map(StoredDate.date(milliseconds:)) }
    }
}
