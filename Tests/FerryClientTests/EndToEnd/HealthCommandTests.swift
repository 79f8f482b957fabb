import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry health` against a real Ferry, a closed port and a listener that never answers.
    @Suite("ferry health")
    struct HealthCommandTests {
        @Test func aServingFerryIsHealthyByFlagOrByServesVariables() async throws {
            let ferry = try await InProcessFerry.start(token: "t0ken")
            do {
                let byFlag = try await runFerry(["health", "--port", "\(ferry.port)"], timeout: 30)
                #expect(byFlag.status == 0, "\(byFlag)")
                #expect(byFlag.stdout == "ok: http://127.0.0.1:\(ferry.port)/healthz answered 200\n", "\(byFlag)")
                // As in the Docker image: FERRY_HOST is the wildcard, FERRY_PORT names the port; no token needed.
                let environment = clientEnvironment(["FERRY_HOST": "0.0.0.0", "FERRY_PORT": "\(ferry.port)"])
                let byVariables = try await runFerry(["health"], environment: environment, timeout: 30)
                #expect(byVariables.status == 0, "\(byVariables)")
                #expect(byVariables.stderr.isEmpty, "\(byVariables)")
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }

        @Test func nothingListeningIsUnhealthyWithOneLineSayingWhy() async throws {
            let port = try closedPort()
            let result = try await runFerry(["health", "--host", "127.0.0.1", "--port", "\(port)"], timeout: 30)
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.stderr.hasPrefix("ferry: unhealthy: cannot reach Ferry at http://127.0.0.1:\(port)"), "\(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
        }

        @Test func aServiceThatNeverAnswersIsUnhealthyWithinTheTimeout() async throws {
            let listener = try SilentListener()
            defer { listener.close() }
            let started = Date()
            let result = try await runFerry(["health", "--port", "\(listener.port)", "--timeout", "500ms"], timeout: 30)
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.hasPrefix("ferry: unhealthy: "), "\(result)")
            #expect(result.stderr.lowercased().contains("timed out"), "\(result)")
            #expect(elapsed < 10, "took \(elapsed) s")
        }

        @Test func aPortThatIsNotOneIsAUsageError() async throws {
            let result = try await runFerry(["health"], environment: clientEnvironment(["FERRY_PORT": "eighty"]), timeout: 30)
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.contains("FERRY_PORT"), "\(result)")
        }
    }
}

/// A socket listening on 127.0.0.1 that never accepts: the kernel completes connections into its backlog, and no
/// request is ever answered.
private final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = self.fd
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 8) == 0
            }
        }
        guard ready else {
            Glibc.close(fd)
            throw HarnessError("bind or listen failed: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(fd) }
}
