import Dispatch

/// A database connection (`SQLiteConnection`, `PostgresConnection`): scripts, transactions, closing.
protocol DatabaseConnection: AnyObject, Sendable {
    /// What opens a transaction (SQLite: `BEGIN IMMEDIATE`, which takes the write lock at once).
    static var begin: String { get }
    /// A transaction is open on a live connection: a failed one needs a `ROLLBACK`.
    var inTransaction: Bool { get }
    /// Runs SQL without parameters or results, possibly several statements separated by `;`.
    func executeScript(_ sql: String, operation: String) throws
    func close()
}

extension DatabaseConnection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<R>(_ operation: String, _ body: () throws -> R) throws -> R {
        try executeScript(Self.begin, operation: "\(operation): begin")
        do {
            let result = try body()
            try executeScript("COMMIT", operation: "\(operation): commit")
            return result
        } catch {
            if inTransaction { try? executeScript("ROLLBACK", operation: "\(operation): rollback") }
            throw error
        }
    }
}

/// One database connection and the private serial queue that owns it: every call on the connection runs on that
/// queue (checked with `dispatchPrecondition`), and async callers suspend on a continuation meanwhile, so blocking
/// database I/O never runs on Swift's cooperative pool. The stores' whole concurrency story (`SQLiteJobStore`,
/// `PostgresJobStore`).
final class ConfinedConnection<Connection: DatabaseConnection>: Sendable {
    private let queue: DispatchQueue
    /// Confined to `queue`.
    private let connection: Connection

    /// Opens the connection on a new queue named `label` and prepares it (settings, schema migration), on that queue:
    /// the caller's task suspends meanwhile, so a slow connect or a migration waiting on another node's lock never
    /// holds a thread of Swift's cooperative pool (issue 24: two tests opening stores held both threads of a 2-core
    /// pool in `PostgresSchema.migrate`, and every task of the process stopped). A connection whose preparation
    /// fails is closed before the error is thrown.
    init(label: String, open: @escaping @Sendable (DispatchQueue) throws -> Connection,
         prepare: @escaping @Sendable (Connection) throws -> Void) async throws {
        let queue = DispatchQueue(label: label)
        self.queue = queue
        self.connection = try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    let connection = try open(queue)
                    do {
                        try prepare(connection)
                    } catch {
                        connection.close()
                        throw error
                    }
                    return connection
                })
            }
        }
    }

    /// Runs `body` on the queue with the connection and returns its result to the caller's task.
    func perform<R: Sendable>(_ body: @escaping @Sendable (Connection) throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [connection, queue] in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(with: Result { try body(connection) })
            }
        }
    }

    /// Closes the connection after the calls queued before.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [connection] in
                connection.close()
                continuation.resume()
            }
        }
    }
}
