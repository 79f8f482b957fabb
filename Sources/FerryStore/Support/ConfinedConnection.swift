import Dispatch

/// A database connection that can be closed (`SQLiteConnection`, `PostgresConnection`).
protocol DatabaseConnection: AnyObject, Sendable {
    func close()
}

/// One database connection and the private serial queue that owns it: every call on the connection runs on that
/// queue (checked with `dispatchPrecondition`), and async callers suspend on a continuation meanwhile, so blocking
/// database I/O never runs on Swift's cooperative pool. The stores' whole concurrency story (`SQLiteJobStore`,
/// `PostgresJobStore`).
final class ConfinedConnection<Connection: DatabaseConnection>: Sendable {
    private let queue: DispatchQueue
    /// Confined to `queue`.
    private let connection: Connection

    /// Opens the connection on a new queue named `label` and prepares it (settings, schema migration); a connection
    /// whose preparation fails is closed before the error is thrown. Blocks while it does.
    init(label: String, open: (DispatchQueue) throws -> Connection, prepare: (Connection) throws -> Void) throws {
        let queue = DispatchQueue(label: label)
        self.queue = queue
        self.connection = try queue.sync {
            let connection = try open(queue)
            do {
                try prepare(connection)
            } catch {
                connection.close()
                throw error
            }
            return connection
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
