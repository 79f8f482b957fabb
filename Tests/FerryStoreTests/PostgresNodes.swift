import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// `count` stores on a fresh database of the shared test PostgreSQL, each with its own connection as a node would
/// have, closed and the database dropped afterwards.
func withPostgresNodes(_ count: Int, _ body: ([PostgresJobStore], PostgresServer, String) async throws -> Void) async throws {
    let server = try await PostgresServer.shared()
    let name = try await server.createDatabase()
    defer { server.dropDatabase(name) }
    let location = try #require(PostgresLocation(server.url(database: name)))
    var stores: [PostgresJobStore] = []
    for _ in 0..<count { stores.append(try await PostgresJobStore(location: location)) }
    do {
        try await body(stores, server, name)
    } catch {
        for store in stores { await store.close() }
        throw error
    }
    for store in stores { await store.close() }
}
