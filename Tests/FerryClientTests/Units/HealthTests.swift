@testable import FerryClient
import Testing

@Suite("ferry health: target and verdict")
struct HealthTests {
    @Test func aWildcardHostIsAskedOnLoopbackOfItsFamily() throws {
        for host in ["0.0.0.0", "", " 0.0.0.0 "] {
            #expect(try HealthTarget(listeningHost: host, port: 8080).url == "http://127.0.0.1:8080/healthz", "\(host)")
        }
        for host in ["::", "[::]", "0:0:0:0:0:0:0:0", "::0"] {
            #expect(try HealthTarget(listeningHost: host, port: 8080).url == "http://[::1]:8080/healthz", "\(host)")
        }
    }

    @Test func anyOtherHostIsAskedAsItIs() throws {
        #expect(try HealthTarget(listeningHost: "127.0.0.1", port: 1).baseURL == "http://127.0.0.1:1")
        #expect(try HealthTarget(listeningHost: "::1", port: 8080).url == "http://[::1]:8080/healthz")
        #expect(try HealthTarget(listeningHost: "[fe80::1]", port: 8080).host == "fe80::1")
        #expect(try HealthTarget(listeningHost: "10.0.0.5", port: 80).url == "http://10.0.0.5:80/healthz")
        #expect(try HealthTarget(listeningHost: "localhost", port: 8080).url == "http://localhost:8080/healthz")
        #expect(try HealthTarget(listeningHost: "0.0.0.1", port: 8080).host == "0.0.0.1")
    }

    @Test func aPortOfZeroCannotBeAsked() {
        #expect(throws: ClientError.self) { try HealthTarget(listeningHost: "127.0.0.1", port: 0) }
        #expect(throws: ClientError.self) { try HealthTarget(listeningHost: "127.0.0.1", port: 65536) }
    }

    @Test func only200IsHealthy() {
        #expect(HealthVerdict.answer(status: 200, from: "u") == .healthy)
        #expect(HealthVerdict.answer(status: 503, from: "http://127.0.0.1:8080/healthz")
            == .unhealthy("http://127.0.0.1:8080/healthz answered HTTP 503, not 200"))
        #expect(HealthVerdict.answer(status: 204, from: "u") != .healthy)
    }
}
