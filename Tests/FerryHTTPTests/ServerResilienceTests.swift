import Foundation
import Synchronization
import Testing
@testable import FerryHTTP
import FerryTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What 200 slow clients and one prompt client saw.
struct SlowlorisOutcome: Sendable {
    /// Per slow client: what it received, how the connection ended, and when (seconds after the first byte).
    var received: [String] = []
    var endings: [WireEnding?] = []
    var endedAfter: [Double] = []
    /// Connections the server had open once every slow client was connected.
    var openWhileSlow = 0
    /// Latency of each of the prompt client's requests, and their statuses.
    var promptLatencies: [Double] = []
    var promptStatuses: [Int] = []
}

extension ServerTests {
    /// Timeouts, limits, resets, backpressure, shutdown: the server under abuse.
    @Suite struct Resilience {
        @Test func slowHeaderClientsAreCutWith408WhileOthersGetPromptAnswers() async throws {
            let slowCount = 200
            try await withServer({ $0.headerTimeout = 1 }, handler: { _ in .text(.ok, "prompt") }) { server, port in
                let outcome = try await offThePool { () -> SlowlorisOutcome in
                    var outcome = SlowlorisOutcome()
                    let request = Array(("GET /slow HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "s", count: 200)).utf8)
                    var clients: [WireClient] = []
                    for _ in 0..<slowCount { clients.append(try WireClient(port: port)) }
                    let acceptDeadline = monotonicSeconds() + 2
                    while server.openConnectionCount < slowCount && monotonicSeconds() < acceptDeadline { usleep(5_000) }
                    outcome.openWhileSlow = server.openConnectionCount
                    var sent = [Int](repeating: 0, count: slowCount)
                    var received = [[UInt8]](repeating: [], count: slowCount)
                    outcome.endings = [WireEnding?](repeating: nil, count: slowCount)
                    outcome.endedAfter = [Double](repeating: 0, count: slowCount)

                    // The prompt client runs on a thread of its own while the slow ones drip.
                    let prompt = Locked<(latencies: [Double], statuses: [Int])>(([], []))
                    let promptDone = DispatchSemaphore(value: 0)
                    var started = false
                    var scratch = [UInt8](repeating: 0, count: 4096)
                    let start = monotonicSeconds()
                    while monotonicSeconds() - start < 8 && outcome.endings.contains(where: { $0 == nil }) {
                        for index in 0..<slowCount where outcome.endings[index] == nil {
                            let fd = clients[index].fd
                            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT)) }
                            if n > 0 {
                                received[index] += scratch[0..<n]
                            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                                outcome.endings[index] = n == 0 ? .closed : .reset
                                outcome.endedAfter[index] = monotonicSeconds() - start
                            } else if received[index].isEmpty && sent[index] < request.count {
                                _ = try? clients[index].write([request[sent[index]]])
                                sent[index] += 1
                            }
                        }
                        if !started {
                            started = true
                            Thread {
                                for _ in 0..<10 {
                                    let began = monotonicSeconds()
                                    let status = (try? LoopbackConnection.fetch(port: port, "/prompt", timeout: 3))?.status ?? 0
                                    prompt.withLock {
                                        $0.latencies.append(monotonicSeconds() - began)
                                        $0.statuses.append(status)
                                    }
                                    usleep(50_000)
                                }
                                promptDone.signal()
                            }.start()
                        }
                        usleep(100_000)
                    }
                    promptDone.wait()
                    (outcome.promptLatencies, outcome.promptStatuses) = prompt.withLock { ($0.latencies, $0.statuses) }
                    outcome.received = received.map { String(decoding: $0, as: UTF8.self) }
                    for client in clients { client.close() }
                    return outcome
                }
                #expect(outcome.openWhileSlow == slowCount)
                #expect(outcome.promptStatuses == [Int](repeating: 200, count: 10))
                // Well under the 1 s header timeout: the prompt client does not wait for the slow ones to be cut. The
                // median, so that one request slowed by a loaded machine (a full parallel test run) does not decide it.
                let latencies = outcome.promptLatencies.sorted()
                #expect(latencies.count == 10 && latencies[latencies.count / 2] < 0.5, "prompt latencies \(outcome.promptLatencies)")
                let timedOut = outcome.received.filter { $0.hasPrefix("HTTP/1.1 408 ") && $0.contains("request_timeout") }
                #expect(timedOut.count == slowCount, "first answer: \(outcome.received.first ?? "")")
                #expect(outcome.endings.allSatisfy { $0 == .closed })
                let earliest = outcome.endedAfter.min() ?? 0
                let latest = outcome.endedAfter.max() ?? 99
                #expect(earliest >= 0.8 && latest < 6, "cut between \(earliest) s and \(latest) s")
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aStalledRequestBodyIsCutWith408() async throws {
            let calls = Recorder()
            try await withServer({ $0.bodyTimeout = 0.5 }, handler: { request in
                calls.record(request.path)
                return .text(.ok, "unexpected")
            }) { server, port in
                let (response, ending, took) = try await offThePool { () -> (WireResponse, WireEnding, Double) in
                    let client = try WireClient(port: port)
                    try client.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
                    let began = monotonicSeconds()
                    let response = try client.readResponse()
                    let took = monotonicSeconds() - began
                    return (response, client.awaitEnd(timeout: 3).ending, took)
                }
                #expect(response.status == 408)
                #expect(response.closes)
                #expect(response.text.contains("request_timeout"))
                #expect(ending == .closed)
                #expect(took > 0.4 && took < 4, "cut after \(took) s")
                #expect(calls.events.isEmpty)
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aLargeResponseToASlowReaderKeepsServerMemoryBounded() async throws {
            let total = 64 * 1024 * 1024
            let producer = PatternProducer(seed: 5, total: total, chunk: 60_000, highWater: 1 << 20)
            try await withServer(handler: { _ in
                HTTPResponse(body: .stream(length: nil) { stream in producer.start(stream) })
            }) { server, port in
                let residentBefore = residentBytes()
                let (received, intact, residentPeak) = try await offThePool { () -> (Int, Bool, Int) in
                    let client = try WireClient(port: port, timeout: 10, receiveBuffer: 64 * 1024)
                    try client.write(WireClient.request("/big"))
                    let head = try client.readHead()
                    guard head.status == 200,
                          head.headers.contains(where: { $0.name == "Transfer-Encoding" && $0.value == "chunked" })
                    else { throw WireError("unexpected head \(head)") }
                    usleep(300_000)  // let every buffer between producer and reader fill up
                    let source = PatternSource(seed: 5)
                    var offset = 0
                    var intact = true
                    var residentPeak = 0
                    var nextPause = 1 << 20
                    while true {
                        let sizeLine = try client.readLine()
                        guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                            throw WireError("bad chunk size \(sizeLine)")
                        }
                        if size == 0 { break }
                        var left = size
                        while left > 0 {
                            guard let piece = client.take(upTo: min(left, 16 * 1024)) else {
                                throw WireError("body ended at \(offset)")
                            }
                            intact = intact && source.matches(piece[...], at: offset)
                            offset += piece.count
                            left -= piece.count
                            if offset >= nextPause {
                                nextPause += 1 << 20
                                residentPeak = max(residentPeak, residentBytes())
                                usleep(2_000)
                            }
                        }
                        guard try client.readLine().isEmpty else { throw WireError("chunk without CRLF") }
                    }
                    guard try client.readLine().isEmpty else { throw WireError("no end of trailers") }
                    return (offset, intact, residentPeak)
                }
                #expect(received == total)
                #expect(intact, "every byte matches the pattern")
                #expect(producer.didFinish)
                // The producer was held back by backpressure, and the server never copied more than its chunk limit
                // (256 KiB) into a connection's output buffer.
                #expect(producer.largestBuffered <= (1 << 20) + 60_000)
                #expect(server.peakOutputBufferBytes > 0)
                #expect(server.peakOutputBufferBytes <= Connection.outputChunkLimit + 64 * 1024,
                        "peak output buffer \(server.peakOutputBufferBytes)")
                #expect(residentPeak - residentBefore < 48 * 1024 * 1024,
                        "resident grew by \((residentPeak - residentBefore) >> 20) MiB while streaming 64 MiB")
            }
        }

        @Test func abruptResetsMidRequestAndMidResponseLeaveTheServerServing() async throws {
            let directory = try Fixture.tempDirectory("ferry-http-reset")
            defer { Fixture.removeTree(directory) }
            let path = directory + "/big.bin"
            try Fixture.writeFile(at: path, size: 8 << 20, seed: 2)
            let producer = PatternProducer(seed: 4, total: nil, chunk: 60_000, highWater: 512 * 1024)
            let handled = Recorder()
            try await withServer(handler: { request in
                handled.record(request.path)
                switch request.path {
                case "/slow":
                    try? await Task.sleep(nanoseconds: 300_000_000)
                    return .text(.ok, "late")
                case "/stream": return HTTPResponse(body: .stream(length: nil) { stream in producer.start(stream) })
                case "/file": return HTTPResponse(body: .file(FileBody(path: path, offset: 0, length: 8 << 20)))
                case "/bytes": return HTTPResponse(body: .bytes(Fixture.content(size: 8 << 20, seed: 6)))
                default: return .text(.ok, "fine")
                }
            }) { server, port in
                try await offThePool {
                    // Mid-request: inside the head, inside the body, and while the handler is still working.
                    let inHead = try WireClient(port: port)
                    try inHead.write("GET /never HTTP/1.1\r\nHost: x\r\nX-Partial: abc")
                    usleep(20_000)
                    inHead.reset()
                    let inBody = try WireClient(port: port)
                    try inBody.write("POST /never HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n" + String(repeating: "z", count: 100))
                    usleep(20_000)
                    inBody.reset()
                    let inHandler = try WireClient(port: port)
                    try inHandler.write(WireClient.request("/slow"))
                    usleep(20_000)
                    inHandler.reset()
                    // Mid-response: a stream, a sendfile body and a large in-memory body, each partly read.
                    for target in ["/stream", "/file", "/bytes"] {
                        let client = try WireClient(port: port, receiveBuffer: 64 * 1024)
                        try client.write(WireClient.request(target))
                        _ = try client.readHead()
                        var got = 0
                        while got < 100_000, let piece = client.take(upTo: 16 * 1024) { got += piece.count }
                        client.reset()
                    }
                }
                #expect(await eventually { server.openConnectionCount == 0 }, "open: \(server.openConnectionCount)")
                #expect(await eventually { producer.sawClose }, "the stream learned its reader left")
                #expect(!handled.events.contains("/never"))
                try? await Task.sleep(nanoseconds: 350_000_000)  // let the abandoned /slow handler finish and deliver

                let after = try await offThePool { try LoopbackConnection.fetch(port: port, "/after") }
                #expect(after.status == 200 && after.text == "fine")
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func connectionsBeyondTheCapAreAnswered503() async throws {
            try await withServer({ $0.maxConnections = 4 }, handler: { _ in .text(.ok, "in") }) { server, port in
                let (held, statuses, refused, refusedEnd) = try await offThePool {
                    var held: [WireClient] = []
                    var statuses: [Int] = []
                    for _ in 0..<4 {
                        let client = try WireClient(port: port)
                        try client.write(WireClient.request("/hold"))
                        statuses.append(try client.readResponse().status)
                        held.append(client)
                    }
                    let extra = try WireClient(port: port)
                    try extra.write(WireClient.request("/over"))
                    let refused = try extra.readResponse()
                    return (held.count, statuses, refused, extra.awaitEnd(timeout: 3).ending)
                }
                #expect(held == 4)
                #expect(statuses == [200, 200, 200, 200])
                #expect(refused.status == 503)
                #expect(refused.header("Retry-After") == "1")
                #expect(refused.closes)
                #expect(refused.text.contains("unavailable"))
                #expect(refusedEnd != .timedOut)
                // The held clients were released when the closure returned: room again.
                #expect(await eventually { server.openConnectionCount == 0 })
                let again = try await offThePool { try LoopbackConnection.fetch(port: port, "/again") }
                #expect(again.status == 200)
            }
        }

        @Test func idleKeepAliveConnectionsAreClosed() async throws {
            try await withServer({ $0.idleTimeout = 0.5 }, handler: { _ in .text(.ok, "once") }) { server, port in
                let (status, afterResponse, silent) = try await offThePool { () -> (Int, (WireEnding, Double), (WireEnding, Double)) in
                    let used = try WireClient(port: port)
                    let quiet = try WireClient(port: port)  // connects and never sends a byte
                    try used.write(WireClient.request("/"))
                    let status = try used.readResponse().status
                    var began = monotonicSeconds()
                    let first = used.awaitEnd(timeout: 3).ending
                    let firstAfter = monotonicSeconds() - began
                    began = monotonicSeconds()
                    let second = quiet.awaitEnd(timeout: 3).ending
                    return (status, (first, firstAfter), (second, monotonicSeconds() - began))
                }
                #expect(status == 200)
                #expect(afterResponse.0 == .closed)
                #expect(afterResponse.1 > 0.35 && afterResponse.1 < 3, "closed after \(afterResponse.1) s")
                #expect(silent.0 == .closed)
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aReaderThatNeverReadsIsAbortedByTheWriteStallTimeout() async throws {
            let producer = PatternProducer(seed: 8, total: nil, chunk: 60_000, highWater: 512 * 1024)
            try await withServer({ $0.writeStallTimeout = 0.5 }, handler: { request in
                if request.path == "/bytes" { return HTTPResponse(body: .bytes(Fixture.content(size: 32 << 20, seed: 9))) }
                return HTTPResponse(body: .stream(length: nil) { stream in producer.start(stream) })
            }) { server, port in
                // Each client reads the response head, then nothing more.
                let clients = try await offThePool { () -> [WireClient] in
                    try ["/stream", "/bytes"].map { target in
                        let client = try WireClient(port: port, receiveBuffer: 16 * 1024)
                        try client.write(WireClient.request(target))
                        guard try client.readHead().status == 200 else { throw WireError("\(target) not 200") }
                        return client
                    }
                }
                let began = monotonicSeconds()
                #expect(server.openConnectionCount == 2)
                #expect(await eventually(timeout: 8) { server.openConnectionCount == 0 }, "open: \(server.openConnectionCount)")
                let elapsed = monotonicSeconds() - began
                #expect(elapsed > 0.45, "aborted after \(elapsed) s")
                #expect(producer.sawClose)
                // What the kernel had already buffered still arrives, then the end: never an endless body.
                let endings = try await offThePool { clients.map { client -> WireEnding in
                    var drained = 0
                    while drained < 48 << 20, let piece = client.take(upTo: 1 << 20) { drained += piece.count }
                    return client.ending ?? .timedOut
                } }
                #expect(endings.allSatisfy { $0 != .timedOut }, "the server ended both connections: \(endings)")
            }
        }

        @Test func theImmediateResponderAnswersWhileTheHandlerIsStuck() async throws {
            let gate = Gate()
            defer { gate.open() }  // never leave a handler suspended, even when the test fails
            let immediate: ImmediateResponder = { request in
                request.path == "/healthz" ? .text(.ok, "alive") : nil
            }
            try await withServer(immediate: immediate, handler: { request in
                await gate.wait()
                return .text(.ok, "finally \(request.path)")
            }) { _, port in
                let (latencies, statuses, stuckPeek) = try await offThePool { () -> ([Double], [Int], WireEnding) in
                    let stuck = try WireClient(port: port)
                    try stuck.write(WireClient.request("/stuck"))
                    let probe = try WireClient(port: port)
                    var latencies: [Double] = []
                    var statuses: [Int] = []
                    for _ in 0..<10 {
                        let began = monotonicSeconds()
                        try probe.write(WireClient.request("/healthz"))
                        statuses.append(try probe.readResponse().status)
                        latencies.append(monotonicSeconds() - began)
                    }
                    return (latencies, statuses, stuck.awaitEnd(timeout: 0.1).ending)
                }
                #expect(statuses == [Int](repeating: 200, count: 10))
                let median = latencies.sorted()[latencies.count / 2]
                #expect(median < 0.1, "probe latencies \(latencies)")
                #expect((latencies.max() ?? 99) < 0.5, "probe latencies \(latencies)")
                #expect(stuckPeek == .timedOut, "the stuck request is still waiting")

                // Behind a stuck request on the same connection, an immediate answer still waits its turn.
                let ordered = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/stuck-again") + WireClient.request("/healthz"))
                    let early = client.awaitEnd(timeout: 0.2)
                    gate.open()
                    return (early.extraBytes, try client.readResponse().text, try client.readResponse().text)
                }
                #expect(ordered.0 == 0)
                #expect(ordered.1 == "finally /stuck-again")
                #expect(ordered.2 == "alive")
            }
        }

        @Test func theImmediateResponderAnswersWhileEveryPoolThreadIsBlocked() async throws {
            // Two handlers block their threads (the whole pool here) for a bounded moment; the probe is answered on
            // the connection's queue regardless.
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let immediate: ImmediateResponder = { request in
                request.path == "/healthz" ? .text(.ok, "alive") : nil
            }
            try await withServer(immediate: immediate, handler: { _ in
                entered.signal()
                _ = release.wait(timeout: .now() + 2)
                return .text(.ok, "unblocked")
            }) { _, port in
                let (blockedCount, latency, status, blockedStatuses) = try await offThePool {
                    let blockers = try (0..<2).map { _ in try WireClient(port: port) }
                    for blocker in blockers { try blocker.write(WireClient.request("/block")) }
                    var blockedCount = 0
                    for _ in 0..<2 where entered.wait(timeout: .now() + 1) == .success { blockedCount += 1 }
                    let began = monotonicSeconds()
                    let probe = try? LoopbackConnection.fetch(port: port, "/healthz", timeout: 2)
                    let latency = monotonicSeconds() - began
                    release.signal()
                    release.signal()
                    let statuses = try blockers.map { try $0.readResponse().status }
                    return (blockedCount, latency, probe?.status ?? 0, statuses)
                }
                #expect(blockedCount >= 1)
                #expect(status == 200)
                // Had the probe needed a pool thread, it would have waited for the blockers' 2 s timeout; half of that
                // leaves a loaded machine room and still tells the two apart.
                #expect(latency < 1, "probe took \(latency) s")
                #expect(blockedStatuses == [200, 200])
            }
        }

        @Test func shutdownFinishesTheRequestInFlightAndRefusesNewConnections() async throws {
            let started = Recorder()
            let payload = Fixture.content(size: 200_000, seed: 12)
            try await withServer(handler: { request in
                if request.path == "/slow" {
                    started.record("slow")
                    try? await Task.sleep(nanoseconds: 500_000_000)
                    return HTTPResponse(body: .bytes(payload))
                }
                return .text(.ok, "quick")
            }) { server, port in
                // An idle keep-alive connection and a request in flight.
                let idle = try await offThePool { () -> WireClient in
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/quick"))
                    _ = try client.readResponse()
                    return client
                }
                let inFlight = Task { try await offThePool { () -> (WireResponse, WireEnding) in
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/slow"))
                    let response = try client.readResponse()
                    return (response, client.awaitEnd(timeout: 3).ending)
                } }
                #expect(await eventually { started.count(of: "slow") == 1 })

                let began = monotonicSeconds()
                let shutdown = Task { await server.shutdown(grace: 3) }
                try await Task.sleep(nanoseconds: 150_000_000)
                let (refusal, idleEnd) = try await offThePool {
                    (WireClient.connectError(port: port), idle.awaitEnd(timeout: 1))
                }
                await shutdown.value
                let took = monotonicSeconds() - began

                #expect(refusal == ECONNREFUSED, "connect after shutdown began: errno \(refusal.map(String.init) ?? "none (connected)")")
                #expect(idleEnd.ending == .closed, "idle keep-alive connections close at once")
                let (response, ending) = try await inFlight.value
                #expect(response.status == 200)
                #expect(response.closes)
                #expect(response.body.count == payload.count)
                #expect(Fixture.sha256Hex(of: response.body) == Fixture.sha256Hex(of: payload))
                #expect(ending == .closed)
                #expect(took > 0.2 && took < 3, "shutdown took \(took) s")
                #expect(server.openConnectionCount == 0)
            }
        }

        @Test func shutdownClosesWhatIsStillRunningWhenTheGraceEnds() async throws {
            let gate = Gate()
            defer { gate.open() }  // never leave a handler suspended, even when the test fails
            let started = Recorder()
            try await withServer(handler: { _ in
                started.record("stuck")
                await gate.wait()
                return .text(.ok, "too late")
            }) { server, port in
                let client = Task { try await offThePool { () -> (WireEnding, Int) in
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/stuck"))
                    let end = client.awaitEnd(timeout: 5)
                    return (end.ending, end.extraBytes)
                } }
                #expect(await eventually { started.count(of: "stuck") == 1 })
                let began = monotonicSeconds()
                await server.shutdown(grace: 0.3)
                let took = monotonicSeconds() - began
                gate.open()
                let (ending, bytes) = try await client.value
                #expect(took >= 0.25 && took < 2.5, "shutdown took \(took) s")
                #expect(ending != .timedOut)
                #expect(bytes == 0, "no answer once the grace is over")
                #expect(server.openConnectionCount == 0)
            }
        }

        @Test func writesToVanishedClientsNeverRaiseSIGPIPE() async throws {
            let directory = try Fixture.tempDirectory("ferry-http-sigpipe")
            defer { Fixture.removeTree(directory) }
            let path = directory + "/big.bin"
            try Fixture.writeFile(at: path, size: 4 << 20, seed: 3)
            let large = Fixture.content(size: 4 << 20, seed: 3)
            try await withServer(handler: { request in
                try? await Task.sleep(nanoseconds: 30_000_000)  // the client is gone by the time the answer is written
                switch request.path {
                case "/small": return .text(.ok, "small")
                case "/bytes": return HTTPResponse(body: .bytes(large))
                case "/file": return HTTPResponse(body: .file(FileBody(path: path, offset: 0, length: 4 << 20)))
                default:
                    return HTTPResponse(body: .stream(length: nil) { stream in
                        PatternProducer(seed: 1, total: 8 << 20).start(stream)
                    })
                }
            }) { server, port in
                // start() ignores SIGPIPE for the whole process; sendfile(2) has no MSG_NOSIGNAL and relies on it.
                let previous = signal(SIGPIPE, SIG_IGN)
                #expect(unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self))
                try await offThePool {
                    for round in 0..<5 {
                        for target in ["/small", "/bytes", "/file", "/stream"] {
                            let client = try WireClient(port: port)
                            try client.write(WireClient.request(target))
                            if round % 2 == 0 { client.close() } else { client.reset() }
                        }
                    }
                    // Some that read a little of the answer first, then vanish.
                    for target in ["/bytes", "/file", "/stream"] {
                        let client = try WireClient(port: port, receiveBuffer: 32 * 1024)
                        try client.write(WireClient.request(target))
                        _ = client.take(upTo: 1000)
                        client.close()
                    }
                }
                #expect(await eventually { server.openConnectionCount == 0 }, "open: \(server.openConnectionCount)")
                let after = try await offThePool { try LoopbackConnection.fetch(port: port, "/small") }
                #expect(after.status == 200 && after.text == "small")
            }
        }
    }
}
