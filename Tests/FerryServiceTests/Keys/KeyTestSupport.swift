import FerryTestSupport
import Foundation
import Testing

/// Helpers of the API key tests: the administrator's token, making keys, reading a stream for a while.
enum KeyTests {
    static let adminToken = "admin-s3cret"

    /// Makes a key with the administrator's client and returns its id and a client using its token.
    static func makeKey(_ ferry: RunningFerry, name: String, scope: String = "write",
                        limits: [String: Any] = [:]) async throws -> (id: String, client: TestClient) {
        let made = try await ferry.client.json("POST", "/api/v1/keys", ["name": name, "scope": scope, "limits": limits])
        #expect(made.status == 201, "\(String(decoding: made.body, as: UTF8.self))")
        let body = try made.json()
        let id = try #require(body["id"] as? String)
        let token = try #require(body["token"] as? String)
        var client = ferry.client
        client.token = token
        return (id, client)
    }

    /// The events a stream delivers within `seconds` (none is fine: the socket timing out ends the wait); stops early
    /// when the stream ends. `ended` says whether it did.
    static func drain(_ reader: EventReader, for seconds: Double) async -> (events: [SSEvent], ended: Bool) {
        var events: [SSEvent] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            do {
                guard let event = try await reader.next(timeout: max(0.1, deadline.timeIntervalSinceNow)) else {
                    return (events, true)
                }
                events.append(event)
            } catch {
                return (events, false)
            }
        }
        return (events, false)
    }
}
