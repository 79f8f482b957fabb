import FerryCore
import FerryTestSupport
import Foundation
import Testing
@testable import FerryEngine

/// `RequestRunner` against a one-shot HTTP listener on 127.0.0.1 written here: the request as sent (method, headers,
/// body), the status as answered, redirects not followed, the destination guard, a connection refused.
@Suite("RequestRunner", .serialized)
struct RequestRunnerTests {
    /// Accepts one connection, reads one request (head and `Content-Length` body), answers `response`, closes.
    final class OneShotListener: @unchecked Sendable {
        let port: Int
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var received = Data()

        init(response: String) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard bound == 0, listen(fd, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            port = Int(UInt16(bigEndian: address.sin_port))
            let listener = fd
            Thread.detachNewThread { [self] in
                let client = accept(listener, nil, nil)
                defer { close(client); close(listener); done.signal() }
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var data = Data()
                while true {
                    let n = read(client, &buffer, buffer.count)
                    if n <= 0 { break }
                    data.append(contentsOf: buffer[0..<n])
                    if let end = data.range(of: Data("\r\n\r\n".utf8)) {
                        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                        if data.count - end.upperBound >= length { break }
                    }
                }
                lock.withLock { received = data }
                let bytes = Array(response.utf8)
                _ = write(client, bytes, bytes.count)
            }
        }

        /// The request as received, once the exchange is over (awaited: the wait runs on a thread of its own).
        func request() async -> String {
            await offThePool { self.done.wait() }
            return lock.withLock { String(decoding: received, as: UTF8.self) }
        }

        var url: SubmittedURL { try! SubmittedURL.parse("http://127.0.0.1:\(port)/hook?x=1") }
    }

    static let loopback = AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!])

    @Test func postsTheBodyAndHeadersAndReportsTheStatus() async throws {
        let listener = try OneShotListener(response: "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        let runner = RequestRunner(limits: .init(destinations: Self.loopback))
        let body = Array(#"{"type":"job.finished","data":{"id":"a"}}"#.utf8)
        let outcome = await runner.send(OutgoingRequest(url: listener.url, headers: ["Content-Type: application/json", "webhook-id: msg_1"], body: body))
        await runner.close()
        #expect(outcome == .answered(status: 204))
        let request = await listener.request()
        #expect(request.hasPrefix("POST /hook?x=1 HTTP/1.1\r\n"))
        #expect(request.contains("\r\nwebhook-id: msg_1\r\n") && request.contains("\r\nContent-Type: application/json\r\n"))
        #expect(request.contains("\r\nContent-Length: \(body.count)\r\n"))
        #expect(!request.lowercased().contains("expect: 100-continue"))
        #expect(request.hasSuffix("\r\n\r\n" + String(decoding: body, as: UTF8.self)))
    }

    @Test func aRedirectIsAnAnswerNotFollowed() async throws {
        let listener = try OneShotListener(response: "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let runner = RequestRunner(limits: .init(destinations: Self.loopback))
        let outcome = await runner.send(OutgoingRequest(url: listener.url, headers: [], body: Array("{}".utf8)))
        await runner.close()
        _ = await listener.request()
        #expect(outcome == .answered(status: 302))
    }

    @Test func theDestinationGuardRefusesAPrivateAddress() async throws {
        let listener = try OneShotListener(response: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let runner = RequestRunner(limits: .init(destinations: AddressPolicy()))
        // A name, so that the refusal comes from the address connected, not from the URL.
        let url = try SubmittedURL.parse("http://localhost:\(listener.port)/hook")
        let outcome = await runner.send(OutgoingRequest(url: url, headers: [], body: []))
        await runner.close()
        guard case .refused(let reason) = outcome else { Issue.record("expected a refusal, got \(outcome)"); return }
        #expect(reason.contains("loopback"))
        // Unblock the listener's thread.
        let poke = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(listener.port).bigEndian)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(poke, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        close(poke)
        await #expect(listener.request().isEmpty)
    }

    @Test func noListenerIsAFailure() async throws {
        let listener = try OneShotListener(response: "")
        let port = listener.port
        // Take the port's listener down: connect once so its thread ends.
        let poke = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(poke, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        close(poke)
        _ = await listener.request()
        let runner = RequestRunner(limits: .init(destinations: Self.loopback))
        let outcome = await runner.send(OutgoingRequest(url: try SubmittedURL.parse("http://127.0.0.1:\(port)/"), headers: [], body: []))
        await runner.close()
        guard case .failed = outcome else { Issue.record("expected a failure, got \(outcome)"); return }
    }
}

extension RequestRunnerTests {
    /// `localhost` may resolve to ::1 first: with only 127.0.0.1/32 allowed, that address is refused and the next
    /// one answers; the outcome is the answer.
    @Test func aRefusedAddressFollowedByAnAllowedOneIsAnAnswer() async throws {
        let listener = try OneShotListener(response: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let runner = RequestRunner(limits: .init(destinations: Self.loopback))
        let url = try SubmittedURL.parse("http://localhost:\(listener.port)/hook")
        let outcome = await runner.send(OutgoingRequest(url: url, headers: [], body: Array("{}".utf8)))
        await runner.close()
        _ = await listener.request()
        #expect(outcome == .answered(status: 200))
    }
}
