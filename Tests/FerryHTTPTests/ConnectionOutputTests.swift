import Foundation
import Testing
@testable import FerryHTTP
import FerryTestSupport
#if canImport(Glibc)
import Glibc
#endif

extension ServerTests {
    /// Issue 32: a connection's output buffer is bounded whatever the client does not read. It is filled only once
    /// empty, with one response head and an inline body (at most `inlineBodyLimit`), or one take of a stream's queued
    /// chunks (`outputChunkLimit`); what a producer wrote beyond that waits in the stream's queue, where it shows in
    /// `bufferedByteCount` (the producer's backpressure), and a client that reads nothing is cut after
    /// `writeStallTimeout`, which drops that queue too. `peakOutputBufferBytes` also records the buffer each time the
    /// socket refuses more.
    @Suite struct ConnectionOutput {
        /// A producer that ignores backpressure (it writes 16 MiB at once) to a client that reads 2 MiB slowly, then
        /// nothing: each time the socket takes more, the output buffer takes one chunk limit of the queued chunks (plus
        /// chunk framing), never more; the rest stays in the stream's queue until the stall timeout closes the
        /// connection.
        @Test func aClientThatStopsReadingHoldsAtMostOneChunkLimitInTheOutput() async throws {
            let total = 16 << 20
            let producer = PatternProducer(seed: 21, total: total, chunk: 60_000, highWater: 2 * total)
            try await withServer({ $0.writeStallTimeout = 1 }, handler: { _ in
                HTTPResponse(body: .stream(length: nil) { stream in producer.start(stream) })
            }) { server, port in
                let client = try await offThePool { () -> WireClient in
                    let client = try WireClient(port: port, receiveBuffer: 16 * 1024)
                    try client.write(WireClient.request("/stream"))
                    guard try client.readHead().status == 200 else { throw WireError("not 200") }
                    var read = 0
                    while read < 2 << 20, let piece = client.take(upTo: 16 * 1024) {
                        read += piece.count
                        usleep(1_000)
                    }
                    return client
                }
                #expect(await eventually(timeout: 5) { producer.didFinish }, "the producer wrote everything")
                #expect(server.peakOutputBufferBytes > 3 * producer.chunk, "several queued chunks were taken at once")
                #expect(await eventually(timeout: 5) { server.peakOutputBufferBytes > 0 }, "the socket refused more")
                #expect(producer.largestBuffered > total - (4 << 20), "the rest waited in the stream's queue")
                #expect(await eventually(timeout: 8) { server.openConnectionCount == 0 }, "cut by the stall timeout")
                #expect(producer.sawClose)
                #expect(server.peakOutputBufferBytes <= Connection.outputChunkLimit + 1024,
                        "peak output buffer \(server.peakOutputBufferBytes)")
                _ = client
            }
        }

        /// Sixteen pipelined requests (the most read ahead) whose answers nobody reads: one answer at a time is in the
        /// output buffer, an inline body at most; a body beyond `inlineBodyLimit` is sent from its own array, never
        /// copied into the buffer.
        @Test func pipelinedAnswersNobodyReadsEnterTheOutputOneAtATime() async throws {
            let small = Connection.inlineBodyLimit - 1000
            try await withServer({ $0.writeStallTimeout = 1 }, handler: { request in
                request.path == "/large"
                    ? HTTPResponse(body: .bytes(Fixture.content(size: 8 << 20, seed: 22)))
                    : HTTPResponse(body: .bytes(Fixture.content(size: small, seed: 23)))
            }) { server, port in
                let client = try await offThePool { () -> WireClient in
                    let client = try WireClient(port: port, receiveBuffer: 16 * 1024)
                    let targets = Array(repeating: "/small", count: Connection.maxPipelinedRequests - 1) + ["/large"]
                    try client.write(targets.map { WireClient.request($0) }.joined())
                    return client
                }
                #expect(await eventually(timeout: 5) { server.openConnectionCount == 1 })
                #expect(await eventually(timeout: 8) { server.openConnectionCount == 0 }, "cut by the stall timeout")
                let peak = server.peakOutputBufferBytes
                #expect(peak >= small, "an answer went through the buffer: \(peak)")
                #expect(peak <= Connection.inlineBodyLimit + 1024, "peak output buffer \(peak)")
                _ = client
            }
        }
    }
}
