import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// Issue 26: a writer whose job asks no checksum (`digestFirst: false`) never lets the digest hold back its
/// results; its file is reported whole and durable first (`finishAhead`), the digests after. A writer with
/// `digestFirst` (a checksum to verify) still has them before.
struct TrailingDigestTests {
    /// A writer whose callbacks land on a private queue.
    private final class Run: @unchecked Sendable {
        let queue = DispatchQueue(label: "test.trailing.callbacks")
        let writer: FileWriter
        init(path: String, digestFirst: Bool, algorithms: [DigestAlgorithm] = []) {
            // Lanes of its own: the tests hold the digest queue, which would hold other tests' writers on shared lanes.
            writer = FileWriter(path: path, label: "test", callbackQueue: queue, algorithms: algorithms, digestFirst: digestFirst,
                                lanes: .alone("test.trailing"))
        }
        func open(keep: Bool) async -> Result<Int64, SystemError> {
            await withCheckedContinuation { c in writer.open(keepExisting: keep) { c.resume(returning: $0) } }
        }
        func write(_ bytes: [UInt8], at offset: Int64) async -> SystemError? {
            await withCheckedContinuation { c in writer.write(bytes, at: offset) { c.resume(returning: $0) } }
        }
        /// `finishAhead`'s two answers, in the order they came.
        func finishAhead() async -> [String] {
            await withCheckedContinuation { c in
                let answers = Answers()
                writer.finishAhead(completion: { result in
                    answers.add("\(result)")
                }, digested: { result in
                    answers.add((try? result.get().sha256).map { "sha256 \($0)" } ?? "failed")
                    c.resume(returning: answers.all)
                })
            }
        }
    }

    private final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ item: String) { lock.withLock { items.append(item) } }
        var all: [String] { lock.withLock { items } }
    }

    /// Stages `content` from `start` in 256 KiB pieces, flushing every four, and returns a box counting the
    /// completions that arrived.
    private func stage(_ content: [UInt8], from start: Int, into run: Run) -> Answers {
        let done = Answers()
        let piece = 256 << 10
        for (index, offset) in stride(from: start, to: content.count, by: piece).enumerated() {
            content[offset..<min(content.count, offset + piece)].withUnsafeBytes { bytes in
                run.writer.stage(bytes, at: Int64(offset)) { error in done.add(error.map { "\($0)" } ?? "ok") }
            }
            if index % 4 == 3 { run.writer.flush() }
        }
        run.writer.flush()
        return done
    }

    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<500 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }

    /// With its digest queue held (a CPU too slow to hash), every write completes and the file is reported finished;
    /// the digest, computed once the queue runs again, is the file's.
    @Test func writesAndTheFinishDoNotWaitForTheDigest() async throws {
        let root = try Fixture.tempDirectory("ferry-trailing-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 12 << 20, seed: 31)
        let run = Run(path: root + "/p", digestFirst: false)
        _ = await run.open(keep: false)
        let hold = DispatchSemaphore(value: 0)
        run.writer.digestQueue.async { hold.wait() }
        let done = stage(content, from: 0, into: run)
        let pieces = (content.count + (256 << 10) - 1) / (256 << 10)
        #expect(await eventually { done.all.count == pieces }, "writes completed while the digest was held")
        #expect(done.all.allSatisfy { $0 == "ok" })
        let finished = Answers()
        run.writer.finishAhead(completion: { finished.add("\($0)") }, digested: { result in
            finished.add((try? result.get().sha256) ?? "failed")
        })
        #expect(await eventually { finished.all.count == 1 }, "finished while the digest was held")
        #expect(finished.all.first == "success(\(content.count))")
        hold.signal()
        #expect(await eventually { finished.all.count == 2 })
        #expect(finished.all.last == Fixture.sha256Hex(of: content))
    }

    /// The same with a checksum to verify (`digestFirst`): the writes wait for the digest, and the digests come
    /// with the finish.
    @Test func aWriterThatVerifiesWaitsForItsDigest() async throws {
        let root = try Fixture.tempDirectory("ferry-trailing-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 2 << 20, seed: 32)
        let run = Run(path: root + "/p", digestFirst: true)
        _ = await run.open(keep: false)
        let hold = DispatchSemaphore(value: 0)
        run.writer.digestQueue.async { hold.wait() }
        let done = stage(content, from: 0, into: run)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(done.all.isEmpty, "no write completes before the digest queue runs")
        hold.signal()
        #expect(await eventually { done.all.count == 8 })
        let answers = await run.finishAhead()
        #expect(answers == ["success(\(content.count))", "sha256 \(Fixture.sha256Hex(of: content))"])
    }

    /// What was not hashed from memory is read back after the finish: a resumed file's bytes, writes out of
    /// order, a hashed byte written again.
    @Test func theTrailingDigestCoversEveryByte() async throws {
        let root = try Fixture.tempDirectory("ferry-trailing-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 300_000, seed: 33)
        // Resumed: 80,000 bytes on disk, not hashed at opening.
        try Data(content[0..<80_000]).write(to: URL(fileURLWithPath: root + "/a"))
        let resumed = Run(path: root + "/a", digestFirst: false, algorithms: [.md5])
        #expect(try await resumed.open(keep: true).get() == 80_000)
        #expect(await resumed.write(Array(content[80_000...]), at: 80_000) == nil)
        #expect(await resumed.finishAhead() == ["success(300000)", "sha256 \(Fixture.sha256Hex(of: content))"])
        // Out of order, then a hashed byte written again (with the same value).
        let shuffled = Run(path: root + "/b", digestFirst: false)
        _ = await shuffled.open(keep: false)
        #expect(await shuffled.write(Array(content[..<100_000]), at: 0) == nil)
        #expect(await shuffled.write(Array(content[200_000...]), at: 200_000) == nil)
        #expect(await shuffled.write(Array(content[100_000..<200_000]), at: 100_000) == nil)
        #expect(await shuffled.write(Array(content[10..<20]), at: 10) == nil)
        #expect(await shuffled.finishAhead() == ["success(300000)", "sha256 \(Fixture.sha256Hex(of: content))"])
    }

    /// The file may be moved into `files/` before the trailing digest reads it: it reads the same bytes.
    @Test func theDigestFollowsAFileMovedAfterTheFinish() async throws {
        let root = try Fixture.tempDirectory("ferry-trailing-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 3 << 20, seed: 34)
        let run = Run(path: root + "/p", digestFirst: false)
        _ = await run.open(keep: true)
        let hold = DispatchSemaphore(value: 0)
        run.writer.digestQueue.async { hold.wait() }
        #expect(await run.write(content, at: 0) == nil)
        let answers = Answers()
        run.writer.finishAhead(completion: { _ in
            answers.add("finished")
            _ = rename(root + "/p", root + "/moved")
        }, digested: { answers.add((try? $0.get().sha256) ?? "failed") })
        #expect(await eventually { answers.all == ["finished"] })
        hold.signal()
        #expect(await eventually { answers.all.count == 2 })
        #expect(answers.all == ["finished", Fixture.sha256Hex(of: content)])
    }

    @Test func aFinishRecordMayLackTheDigest() {
        let without = FinishRecord(filename: "f.bin", size: 9, sha256: nil)
        #expect(FinishRecord.decode(without.encoded) == without)
        let with = FinishRecord(filename: "f.bin", size: 9, sha256: String(repeating: "c", count: 64))
        #expect(FinishRecord.decode(with.encoded) == with)
        #expect(FinishRecord.decode("ferry-finish 1\nname f\nsize 9\nsha256 abc\n") == nil)
        let group = FinishRecordGroup(records: [("j1", without), ("j2", with)])
        #expect(FinishRecordGroup.decode(group.encoded) == group)
    }
}

extension EngineIntegrationTests {
    /// A job with a checksum is verified before `.finished`, which carries the SHA-256; one without may finish
    /// first, and then a `.digested` brings it. Either way the digest is the file's.
    @Test func onlyAJobWithAChecksumHasItsDigestBeforeFinished() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        try Fixture.writeFile(at: origin.root + "/d.bin", size: 6_000_000, seed: 35)
        let expected = Fixture.sha256Hex(of: Fixture.content(size: 6_000_000, seed: 35))
        try await EngineHarness.run { h in
            let checked = try Checksum(algorithm: .sha256, value: expected)
            h.engine.submit(TransferSpec(id: "c1", url: origin.url("/d.bin"), filename: "c.bin", checksum: checked))
            h.engine.submit(TransferSpec(id: "n1", url: origin.url("/d.bin"), filename: "n.bin"))
            #expect(await h.recorder.wait { events in
                events.contains { $0.id == "c1" && $0.isEnd } && events.contains { $0.id == "n1" && $0.isEnd }
            })
            let verified = try #require(h.recorder.events(for: "c1").last?.finishedFile)
            #expect(verified.sha256 == expected)
            #expect(!h.recorder.events(for: "c1").contains { $0.digestedSHA256 != nil })
            let plain = try #require(h.recorder.events(for: "n1").compactMap(\.finishedFile).first)
            if plain.sha256 == nil {
                #expect(await h.recorder.wait { $0.contains { $0.id == "n1" && $0.digestedSHA256 != nil } })
                let trailing = h.recorder.events(for: "n1").compactMap(\.digestedSHA256)
                #expect(trailing == [expected])
                let events = h.recorder.events(for: "n1")
                let finishedAt = try #require(events.firstIndex { $0.finishedFile != nil })
                let digestedAt = try #require(events.firstIndex { $0.digestedSHA256 != nil })
                #expect(finishedAt < digestedAt)
            } else {
                #expect(plain.sha256 == expected)
                #expect(!h.recorder.events(for: "n1").contains { $0.digestedSHA256 != nil })
            }
        }
    }
}
