import Dispatch
import Foundation

/// A `JobStore` in a PostgreSQL database (`--store postgres://...`), reached through libpq.
///
/// A private serial `DispatchQueue` owns the one connection (`PostgresConnection`); every database call runs there
/// (checked with `dispatchPrecondition`). The async methods hand their work to that queue and suspend on a
/// continuation. libpq's blocking API is used on that queue (`PQexecParams` waits for the server's answer): simple,
/// and it never blocks Swift's cooperative pool; one statement at a time per store is the cost. The non-blocking
/// API on a Dispatch read source, with pipelining, is the step after (`PostgresListener` already reads that way).
///
/// Several nodes: it is also a `ClusterJobStore` (`+Cluster`: ownership and leases; `+Events`: the event log); each
/// node opens its own store, and the database enforces who may change what.
///
/// Each mutating call is its own transaction and is durable when it returns (the server's `synchronous_commit`).
/// `sequence` comes from the database's `job_sequence`, shared by every process on the database. The schema is
/// migrated at open (`PostgresSchema`). Dates are kept to the millisecond (`StoredDate`).
public final class PostgresJobStore: SQLJobStore, @unchecked Sendable {
    public let location: PostgresLocation

    let confined: ConfinedConnection<PostgresConnection>

    /// Connects to `location` and migrates the database to the current schema. Blocks while it does.
    /// - Throws: `JobStoreError.postgres` (SQLSTATE `08001` when the server cannot be reached: the message says how
    ///   it was tried, without the password); `JobStoreError.corrupt` when a newer Ferry wrote the schema.
    public init(location: PostgresLocation) async throws {
        self.location = location
        confined = try await ConfinedConnection(label: "ferry.store.postgres", open: { queue in
            try PostgresConnection(url: location.url, location: location.redacted, queue: queue)
        }, prepare: { try PostgresSchema.migrate($0) })
    }

    /// The schema version of the database (tests, diagnostics).
    func schemaVersion() async throws -> Int {
        try await perform { try PostgresSchema.version($0) }
    }
}
