import Testing
@testable import FerryHTTP

@Suite struct AccessLogLineTests {
    /// The line as it was first written, with string interpolation.
    static func reference(method: String, target: String, status: Int, bytes: Int64, micros: UInt64, remote: String) -> String {
        let path = target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
        return "\(method) \(path) \(status) \(bytes) \(micros / 1000).\(String(micros % 1000 / 10 + 100).dropFirst())ms \(remote)"
    }

    @Test func matchesTheInterpolatedFormat() {
        let targets = ["/", "/api/v1/jobs/abc", "/api/v1/jobs?state=finished", "/a%20b?x", "-", "/?"]
        let micros: [UInt64] = [0, 5, 9, 10, 99, 999, 1000, 1009, 12_345, 987_654_321]
        for target in targets {
            for time in micros {
                for (status, bytes) in [(200, Int64(0)), (404, 512), (503, 1 << 40)] {
                    let line = AccessLogLine.format(method: "GET", target: target, status: status, bytes: bytes,
                                                    micros: time, remote: "127.0.0.1:50000")
                    #expect(line == Self.reference(method: "GET", target: target, status: status, bytes: bytes,
                                                   micros: time, remote: "127.0.0.1:50000"))
                }
            }
        }
        #expect(AccessLogLine.format(method: "HEAD", target: "/x?y", status: 200, bytes: 10, micros: 1234,
                                     remote: "[::1]:9") == "HEAD /x 200 10 1.23ms [::1]:9")
    }

    @Test func aResponseCutOffSaysSo() {
        #expect(AccessLogLine.format(method: "GET", target: "/api/v1/jobs/j/content", status: 200, bytes: 65_536, micros: 1_000_000,
                                     remote: "127.0.0.1:5", interrupted: true)
                == "GET /api/v1/jobs/j/content 200 65536 1000.00ms 127.0.0.1:5 interrupted")
    }
}
