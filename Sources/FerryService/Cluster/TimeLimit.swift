import Synchronization

/// Runs an async call with a time limit that holds even when the call cannot be cancelled (a libpq statement waiting
/// on a store's queue for a server that stopped answering): the caller gets `TimeLimit.Exceeded` when the limit
/// passes, and the call runs on, unwatched, its result dropped.
enum TimeLimit {
    /// The call did not answer within the limit.
    struct Exceeded: Error, CustomStringConvertible {
        var operation: String
        var limit: Duration
        var description: String { "\(operation) did not answer within \(limit)" }
    }

    /// The result of `body`, or `Exceeded` once `limit` has passed without one.
    static func run<R: Sendable>(_ operation: String, limit: Duration,
                                 _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let answered = Mutex(false)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            /// The first outcome resumes the caller; the other is dropped.
            let settle: @Sendable (Result<R, any Error>) -> Void = { outcome in
                let first = answered.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(with: outcome) }
            }
            let call = Task {
                do { settle(.success(try await body())) } catch { settle(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: limit)
                call.cancel()
                settle(.failure(Exceeded(operation: operation, limit: limit)))
            }
        }
    }
}
