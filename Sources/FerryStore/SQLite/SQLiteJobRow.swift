import Foundation

/// How a `JobRecord` maps to a row of the `jobs` table: the column list, the SQL built from it, binding and
/// reading. Pure mapping; runs on the store's queue with the statements it is given.
enum SQLiteJobRow {
    /// Every column, in schema order. Parameters have the same names (`:url` for `url`).
    static let columns = [
        "id", "sequence", "state", "dedupe_key", "url", "final_url", "filename", "requested_filename",
        "bytes_received", "bytes_expected", "content_type", "sha256", "expected_sha256",
        "error_code", "error_message", "error_http_status", "attempts", "priority", "max_bytes_per_second",
        "connections", "headers", "etag", "last_modified", "resume_data",
        "created_at", "started_at", "finished_at", "updated_at",
    ]

    static let selectColumns = columns.joined(separator: ", ")

    static let insertSQL = """
        INSERT INTO jobs (\(selectColumns)) VALUES (\(columns.map { ":" + $0 }.joined(separator: ", ")))
        """

    /// Replaces everything but `id` and `sequence`.
    static let updateSQL = """
        UPDATE jobs SET \(columns.filter { $0 != "id" && $0 != "sequence" }.map { "\($0) = :\($0)" }
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
        try statement.bind(job.expectedSHA256, to: ":expected_sha256")
        try statement.bind(job.error?.code, to: ":error_code")
        try statement.bind(job.error?.message, to: ":error_message")
        try statement.bind(job.error?.httpStatus, to: ":error_http_status")
        try statement.bind(job.attempts, to: ":attempts")
        try statement.bind(job.priority, to: ":priority")
        try statement.bind(job.maxBytesPerSecond, to: ":max_bytes_per_second")
        try statement.bind(job.connections, to: ":connections")
        try statement.bind(try encodeHeaders(job.headers), to: ":headers")
        try statement.bind(job.etag, to: ":etag")
        try statement.bind(job.lastModified, to: ":last_modified")
        try statement.bind(job.resumeData, to: ":resume_data")
        try statement.bind(StoredDate.seconds(job.createdAt), to: ":created_at")
        try statement.bind(job.startedAt.map(StoredDate.seconds), to: ":started_at")
        try statement.bind(job.finishedAt.map(StoredDate.seconds), to: ":finished_at")
        try statement.bind(StoredDate.seconds(job.updatedAt), to: ":updated_at")
    }

    /// The record in the statement's current row (selected with `selectColumns`).
    /// - Throws: `JobStoreError.corrupt` when a required column is NULL or holds something Ferry never writes.
    static func record(from row: Statement) throws -> JobRecord {
        guard let id = row.string("id") else { throw JobStoreError.corrupt("a job row has a NULL id") }
        func need<T>(_ value: T?, _ column: String) throws -> T {
            guard let value else { throw JobStoreError.corrupt("job \(id): column \(column) is NULL") }
            return value
        }
        let stateText = try need(row.string("state"), "state")
        guard let state = JobState(rawValue: stateText) else {
            throw JobStoreError.corrupt("job \(id): unknown state \"\(stateText)\"")
        }
        let headersText = try need(row.string("headers"), "headers")
        guard let headers = try? JSONDecoder().decode([HeaderField].self, from: Data(headersText.utf8)) else {
            throw JobStoreError.corrupt("job \(id): headers are not a JSON list of name/value pairs")
        }
        let error = row.string("error_code").map {
            JobError(code: $0, message: row.string("error_message") ?? "", httpStatus: row.int("error_http_status"))
        }
        return JobRecord(
            id: id,
            sequence: try need(row.int64("sequence"), "sequence"),
            url: try need(row.string("url"), "url"),
            finalURL: row.string("final_url"),
            state: state,
            filename: row.string("filename"),
            requestedFilename: row.string("requested_filename"),
            bytesReceived: try need(row.int64("bytes_received"), "bytes_received"),
            bytesExpected: row.int64("bytes_expected"),
            contentType: row.string("content_type"),
            sha256: row.string("sha256"),
            expectedSHA256: row.string("expected_sha256"),
            error: error,
            attempts: try need(row.int("attempts"), "attempts"),
            priority: try need(row.int("priority"), "priority"),
            maxBytesPerSecond: row.int64("max_bytes_per_second"),
            connections: row.int("connections"),
            headers: headers,
            dedupeKey: try need(row.string("dedupe_key"), "dedupe_key"),
            etag: row.string("etag"),
            lastModified: row.string("last_modified"),
            resumeData: row.bytes("resume_data"),
            createdAt: StoredDate.date(seconds: try need(row.double("created_at"), "created_at")),
            startedAt: row.double("started_at").map(StoredDate.date(seconds:)),
            finishedAt: row.double("finished_at").map(StoredDate.date(seconds:)),
            updatedAt: StoredDate.date(seconds: try need(row.double("updated_at"), "updated_at"))
        )
    }

    private static func encodeHeaders(_ headers: [HeaderField]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(headers), as: UTF8.self)
        } catch {
            throw JobStoreError.corrupt("headers cannot be encoded as JSON: \(error)")
        }
    }
}
