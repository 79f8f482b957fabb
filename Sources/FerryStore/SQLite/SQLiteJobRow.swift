import FerryCore
import Foundation

/// How a `JobRecord` maps to a row of the `jobs` table: the column list, the SQL built from it, binding and
/// reading. Pure mapping; runs on the store's queue with the statements it is given.
enum SQLiteJobRow {
    /// Every column, in schema order. Parameters have the same names (`:url` for `url`).
    static let columns = [
        "id", "sequence", "state", "dedupe_key", "url", "final_url", "filename", "requested_filename",
        "bytes_received", "bytes_expected", "content_type", "sha256", "checksum",
        "error_code", "error_message", "error_http_status", "attempts", "priority", "max_bytes_per_second",
        "connections", "headers", "etag", "last_modified",
        "created_at", "started_at", "finished_at", "updated_at", "tags", "notify", "delivery",
        "sources", "follows", "owner_key",
    ]

    static let selectColumns = columns.joined(separator: ", ")

    /// `selectColumns` qualified with the table's name, for queries that join another table.
    static let qualifiedSelectColumns = columns.map { "jobs." + $0 }.joined(separator: ", ")

    /// Columns written with every row but never read back: `search_text` (derived, see `JobFilter.searchText`).
    static let derivedColumns = ["search_text"]

    /// What insert and update write.
    private static let writtenColumns = columns + derivedColumns

    static let insertSQL = """
        INSERT INTO jobs (\(writtenColumns.joined(separator: ", "))) VALUES (\(writtenColumns.map { ":" + $0 }
            .joined(separator: ", ")))
        """

    /// Replaces everything but `id` and `sequence`.
    static let updateSQL = """
        UPDATE jobs SET \(writtenColumns.filter { $0 != "id" && $0 != "sequence" }.map { "\($0) = :\($0)" }
            .joined(separator: ", ")) WHERE id = :id
        """

    /// Binds every column of `job`; `:sequence` only when the statement has it (insert, not update).
    static func bind(_ job: JobRecord, to statement: Statement, includingSequence: Bool) throws {
        try statement.bind(job.id, to: ":id")
        if includingSequence { try statement.bind(job.sequence, to: ":sequence") }
        try statement.bind(job.state.rawValue, to: ":state")
        try statement.bind(job.dedupeKey, to: ":dedupe_key")
        try statement.bind(job.url, to: ":url")
        try statement.bind(job.finalURL, to: ":final_url")
        try statement.bind(job.filename, to: ":filename")
        try statement.bind(job.requestedFilename, to: ":requested_filename")
        try statement.bind(job.bytesReceived, to: ":bytes_received")
        try statement.bind(job.bytesExpected, to: ":bytes_expected")
        try statement.bind(job.contentType, to: ":content_type")
        try statement.bind(job.sha256, to: ":sha256")
        try statement.bind(job.checksum?.description, to: ":checksum")
        try statement.bind(job.error?.code.rawValue, to: ":error_code")
        try statement.bind(job.error?.message, to: ":error_message")
        try statement.bind(job.error?.httpStatus, to: ":error_http_status")
        try statement.bind(job.attempts, to: ":attempts")
        try statement.bind(job.priority, to: ":priority")
        try statement.bind(job.maxBytesPerSecond, to: ":max_bytes_per_second")
        try statement.bind(job.connections, to: ":connections")
        try statement.bind(try encodeHeaders(job.headers), to: ":headers")
        try statement.bind(job.etag, to: ":etag")
        try statement.bind(job.lastModified, to: ":last_modified")
        try statement.bind(StoredDate.seconds(job.createdAt), to: ":created_at")
        try statement.bind(job.startedAt.map(StoredDate.seconds), to: ":started_at")
        try statement.bind(job.finishedAt.map(StoredDate.seconds), to: ":finished_at")
        try statement.bind(StoredDate.seconds(job.updatedAt), to: ":updated_at")
        try statement.bind(try encodeTags(job.tags), to: ":tags")
        try statement.bind(job.notify, to: ":notify")
        try statement.bind(try job.delivery.map { try encodeDocument($0, "a delivery") }, to: ":delivery")
        try statement.bind(try job.sources.map { try encodeDocument($0, "sources") }, to: ":sources")
        try statement.bind(job.follows, to: ":follows")
        try statement.bind(job.ownerKey, to: ":owner_key")
        try statement.bind(JobFilter.searchText(of: job), to: ":search_text")
    }

    /// The record in the statement's current row (selected with `selectColumns`, whose order `JobColumn` names).
    /// - Throws: `JobStoreError.corrupt` when a required column is NULL or holds something Ferry never writes.
    /// - Parameter strings: shares the storage of repeated URLs, dedupe keys and content types between the
    ///   records read with it (pass one interner per query).
    static func record(from row: Statement, strings: inout StringInterner) throws -> JobRecord {
        try JobRowDecoding.record(Row(statement: row), strings: &strings)
    }

    /// A statement's current row, read by position: a name lookup per column and row is a hash of the name (28 per
    /// job at start-up).
    private struct Row: JobRowReading {
        let statement: Statement
        func text(_ column: JobColumn) -> String? { statement.string(at: Int32(column.rawValue)) }
        func integer(_ column: JobColumn) -> Int64? { statement.int64(at: Int32(column.rawValue)) }
        func date(_ column: JobColumn) -> Date? { statement.double(at: Int32(column.rawValue)).map(StoredDate.date(seconds:)) }
    }

    /// A stored checksum (`sha-512:HEX`, `Checksum.description`); nil for NULL.
    /// - Throws: `JobStoreError.corrupt` for text Ferry never writes there.
    static func checksum(_ text: String?, id: String) throws -> Checksum? {
        guard let text else { return nil }
        do { return try Checksum(parsing: text) } catch {
            throw JobStoreError.corrupt("job \(id): checksum \"\(text)\" is unreadable: \(error)")
        }
    }

    /// `nil` when the text is not a JSON list of name/value pairs.
    static func decodeHeaders(_ text: String) -> [HeaderField]? { decodeList(text) }
    static func encodeHeaders(_ headers: [HeaderField]) throws -> String { try encodeList(headers, "headers") }
    /// `nil` when the text is not a JSON list of strings.
    static func decodeTags(_ text: String) -> [String]? { decodeList(text) }
    static func encodeTags(_ tags: [String]) throws -> String { try encodeList(tags, "tags") }

    /// `[]` (what most jobs have) without a JSON decoder; `nil` when the text is not a JSON list of `Element`.
    private static func decodeList<Element: Decodable>(_ text: String) -> [Element]? {
        if text == "[]" { return [] }
        return try? JSONDecoder().decode([Element].self, from: Data(text.utf8))
    }

    /// A list as one-line JSON, keys sorted; `what` names it in the error.
    private static func encodeList<Element: Encodable>(_ list: [Element], _ what: String) throws -> String {
        // What the encoder below writes for an empty list, without making one for every job.
        if list.isEmpty { return "[]" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(list), as: UTF8.self)
        } catch {
            throw JobStoreError.corrupt("\(what) cannot be encoded as JSON: \(error)")
        }
    }

    /// A column kept as one JSON document (`delivery`, `sources`; dates as milliseconds since 1970, like every
    /// stored date): nil for NULL; `corrupt` when the text is not such a document.
    static func decodeDocument<Document: Decodable>(_ type: Document.Type, _ text: String?, _ corrupt: @autoclosure () -> String) throws -> Document? {
        guard let text else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard let document = try? decoder.decode(type, from: Data(text.utf8)) else { throw JobStoreError.corrupt(corrupt()) }
        return document
    }

    static func encodeDocument<Document: Encodable>(_ document: Document, _ what: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        do {
            return String(decoding: try encoder.encode(document), as: UTF8.self)
        } catch {
            throw JobStoreError.corrupt("\(what) cannot be encoded as JSON: \(error)")
        }
    }

    /// Schema 3's backfill: `search_text` of every row already stored (rows written since carry their own).
    static func backfillSearchText(_ connection: SQLiteConnection) throws {
        var rows: [(id: String, text: String)] = []
        try connection.withStatement("SELECT id, url, filename FROM jobs", operation: "read jobs to index") { statement in
            while try statement.step() {
                guard let id = statement.string("id"), let url = statement.string("url") else { continue }
                rows.append((id, JobFilter.searchText(filename: statement.string("filename"), url: url)))
            }
        }
        for row in rows {
            try connection.withStatement(
                "UPDATE jobs SET search_text = :search_text WHERE id = :id", operation: "index a job for search"
            ) { statement in
                try statement.bind(row.text, to: ":search_text")
                try statement.bind(row.id, to: ":id")
                try statement.step()
            }
        }
    }
}
