import CPostgres
import Dispatch
import Foundation

/// One libpq connection (`PGconn`) to the PostgreSQL server, and the statements run on it.
///
/// Confined to the serial queue its owner passes in (`PostgresJobStore`'s queue): every method checks that it runs
/// there. Calls use libpq's blocking API (`PQexecParams`, `PQexecPrepared`): each waits for the server's answer on
/// that queue, which is acceptable because the queue is the store's own and callers suspend on a continuation
/// meanwhile. Values are always sent as parameters, never spliced into SQL. A connection found broken between statements is re-established
/// once (`PQreset`) before the next one; a break inside a transaction fails that transaction.
/// The statements run for every job change are prepared once per connection (`reuse`), so behind PgBouncer it needs
/// session pooling (transaction pooling does not keep prepared statements). Every failure is a
/// `JobStoreError.postgres` carrying the SQLSTATE (`08001`/`08006` when libpq gives none because the server could not
/// be reached), the server's message on one line, and the operation that failed.
final class PostgresConnection: DatabaseConnection, @unchecked Sendable {
    /// The server as logs may show it (`PostgresLocation.redacted`: no password).
    let location: String
    private let queue: DispatchQueue
    private var handle: OpaquePointer?
    /// Names of the statements prepared on this connection, by SQL text (lost, so cleared, when it is re-established).
    private var prepared: [String: String] = [:]

    /// Connects to `url` (a `postgres://` URI libpq understands), with UTF-8 as the client encoding and, unless the URL
    /// says otherwise, a 10 s connect timeout, `application_name=ferry`, and TCP keepalives with a 30 s user timeout
    /// so a server that vanished fails the statement waiting for it within about a minute instead of blocking the
    /// store's queue. Blocks until connected or refused.
    init(url: String, location: String, queue: DispatchQueue) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        self.location = location
        self.queue = queue
        // Keywords before `dbname` are defaults the URL may override; those after it are forced.
        let keywords = ["connect_timeout", "application_name", "keepalives", "keepalives_idle", "keepalives_interval",
                        "keepalives_count", "tcp_user_timeout", "dbname", "client_encoding"]
        let values = ["10", "ferry", "1", "30", "10", "3", "30000", url, "UTF8"]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.oneLine(String(cString: PQerrorMessage($0))) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            throw JobStoreError.postgres(sqlstate: "08001", message: message, operation: "connect to \(location)")
        }
        // Notices (e.g. "relation already exists, skipping") would go to stderr: Ferry does not want them.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        // No other reference exists once deinit runs, so touching the handle off the queue is safe here.
        if let handle { PQfinish(handle) }
    }

    /// Runs one statement with `parameters` bound to `$1`, `$2`, ... and returns its rows.
    /// - Parameter reuse: prepare the statement once per connection and run it by name afterwards (the server parses
    ///   and plans it once): for the statements run for every job change. Not for lists, whose best plan depends
    ///   on the values.
    /// - Parameter binaryResults: every column comes back in binary format (`PostgresResult` reads both): for rows
    ///   with `bytea` read often (events), which then need no hex decoding.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = [], reuse: Bool = false, binaryResults: Bool = false,
                 operation: String) throws -> PostgresResult {
        let connection = try usableConnection(operation: operation)
        var types: [Oid] = []
        var formats: [Int32] = []
        var lengths: [Int32] = []
        var values: [UnsafeMutablePointer<CChar>?] = []
        defer { values.forEach { free($0) } }
        for parameter in parameters {
            switch parameter {
            case .text(let text):
                types.append(0)  // the server infers the type from the statement
                formats.append(0)
                lengths.append(0)
                values.append(strdup(text))
            case .bytes(let bytes):
                types.append(17)  // bytea
                formats.append(1)
                lengths.append(Int32(bytes.count))
                let copy = malloc(max(1, bytes.count))!.assumingMemoryBound(to: CChar.self)
                bytes.withUnsafeBytes { raw in
                    if let base = raw.baseAddress { memcpy(copy, base, bytes.count) }
                }
                values.append(copy)
            case .null:
                types.append(0)
                formats.append(0)
                lengths.append(0)
                values.append(nil)
            }
        }
        let name = reuse ? try preparedName(sql, types: types, connection: connection, operation: operation) : nil
        let result = values.withUnsafeBufferPointer { valuePointers in
            valuePointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constValues in
                if let name {
                    PQexecPrepared(connection, name, Int32(parameters.count), constValues.baseAddress, lengths, formats,
                                   binaryResults ? 1 : 0)
                } else {
                    PQexecParams(connection, sql, Int32(parameters.count), types, constValues.baseAddress,
                                 lengths, formats, binaryResults ? 1 : 0)
                }
            }
        }
        return try checked(result, connection: connection, operation: operation)
    }

    /// The name `sql` is prepared under on this connection, preparing it first if needed.
    private func preparedName(_ sql: String, types: [Oid], connection: OpaquePointer, operation: String) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "ferry_\(prepared.count + 1)"
        _ = try checked(PQprepare(connection, name, sql, Int32(types.count), types), connection: connection,
                        operation: "\(operation): prepare")
        prepared[sql] = name
        return name
    }

    /// Runs SQL without parameters, possibly several statements separated by `;` (migrations).
    func executeScript(_ sql: String, operation: String) throws {
        let connection = try usableConnection(operation: operation)
        _ = try checked(PQexec(connection, sql), connection: connection, operation: operation)
    }

    static let begin = "BEGIN"

    var inTransaction: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// Closes the connection; later calls fail with `08003` (connection does not exist).
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        if let handle { PQfinish(handle) }
        handle = nil
        prepared = [:]
    }

    // MARK: Notifications (`PostgresListener`)

    /// The connection's socket, for a Dispatch read source; -1 when closed. libpq owns it: `close()` closes it, so
    /// close only once no source watches it.
    var socket: Int32 {
        dispatchPrecondition(condition: .onQueue(queue))
        return handle.map { PQsocket($0) } ?? -1
    }

    /// Reads what the server sent without blocking (`PQconsumeInput`). Returns the connection's failure when it is
    /// broken (`08006`, libpq's message), nil while it is fine.
    func consumeInput() -> JobStoreError? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let handle else {
            return JobStoreError.postgres(sqlstate: "08003", message: "the connection is closed", operation: "listen")
        }
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            return JobStoreError.postgres(sqlstate: "08006", message: Self.oneLine(String(cString: PQerrorMessage(handle))),
                                          operation: "listen on \(location)")
        }
        return nil
    }

    /// The next notification libpq has read (`PQnotifies`), nil when none is waiting.
    func nextNotification() -> (channel: String, payload: String)? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let handle, let notification = PQnotifies(handle) else { return nil }
        defer { PQfreemem(notification) }
        return (String(cString: notification.pointee.relname), String(cString: notification.pointee.extra))
    }

    // MARK: Private

    /// The open connection, re-established first when it broke since the last statement (outside a transaction).
    private func usableConnection(operation: String) throws -> OpaquePointer {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let handle else {
            throw JobStoreError.postgres(sqlstate: "08003", message: "the job store is closed", operation: operation)
        }
        if PQstatus(handle) != CONNECTION_OK {
            prepared = [:]
            PQreset(handle)
            guard PQstatus(handle) == CONNECTION_OK else {
                throw JobStoreError.postgres(sqlstate: "08001", message: Self.oneLine(String(cString: PQerrorMessage(handle))),
                                             operation: "\(operation): reconnect to \(location)")
            }
        }
        return handle
    }

    /// `result` when the statement succeeded; the error it carries otherwise.
    private func checked(_ result: OpaquePointer?, connection: OpaquePointer, operation: String) throws -> PostgresResult {
        guard let result else {
            throw JobStoreError.postgres(sqlstate: PQstatus(connection) == CONNECTION_OK ? "XX000" : "08006",
                                         message: Self.oneLine(String(cString: PQerrorMessage(connection))),
                                         operation: operation)
        }
        let wrapped = PostgresResult(handle: result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return wrapped
        default:
            let field = { (code: UInt8) -> String? in
                PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            // No SQLSTATE: libpq's own failure, almost always the connection going away.
            let sqlstate = field(UInt8(ascii: "C")) ?? (PQstatus(connection) == CONNECTION_OK ? "XX000" : "08006")
            let message = field(UInt8(ascii: "M")) ?? String(cString: PQresultErrorMessage(result))
            throw JobStoreError.postgres(sqlstate: sqlstate, message: Self.oneLine(message), operation: operation)
        }
    }

    /// libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): one line for logs.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Calls `body` with a NULL-terminated `const char *[]` of `strings`.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
