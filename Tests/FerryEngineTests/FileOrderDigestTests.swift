import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// `FileOrderDigest`: what is hashed from memory, what is read back from the file, when the digest is no longer
/// trusted, and the bound of the runs waiting for the digest of a writer without `digestFirst`.
struct FileOrderDigestTests {
    /// A file of its own and a digest over it, the test standing in for the writer's queue.
    private final class Subject: @unchecked Sendable {
        let root: String
        let fd: Int32
        let hasher: FileOrderDigest
        /// The lane the digest queue runs on: a test holds the digest back by suspending it (no thread is held).
        let lane = DispatchQueue(label: "test.digest.lane")
        init(digestFirst: Bool) throws {
            root = try Fixture.tempDirectory("ferry-file-order-digest")
            fd = open(root + "/p", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            hasher = FileOrderDigest(path: root + "/p", queue: LaneQueue(label: "test.digest", lane: lane),
                                     algorithms: [], digestFirst: digestFirst)
        }
        deinit {
            close(fd)
            Fixture.removeTree(root)
        }
        /// Writes `bytes` at `offset` into the file, then tells the digest, with the gapless prefix `prefix`
        /// before the write; returns whether the bytes were queued to be hashed from memory.
        func write(_ bytes: ArraySlice<UInt8>, at offset: Int, prefix: Int, recycle: @escaping @Sendable (RunBuffer) -> Void = { _ in }) -> Bool {
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
            return hasher.hash(.array(Array(bytes)), at: Int64(offset), prefix: Int64(prefix), recycle: recycle)
        }
        func complete(size: Int) async -> String? {
            let tail = hasher.trailing(descriptor: dup(fd), size: Int64(size))
            return await withCheckedContinuation { c in
                hasher.queue.async { [hasher] in c.resume(returning: try? hasher.complete(tail).get().sha256) }
            }
        }
    }

    @Test func writesInFileOrderAreHashedFromMemory() async throws {
        let subject = try Subject(digestFirst: true)
        let content = Fixture.content(size: 300_000, seed: 11)
        for start in stride(from: 0, to: content.count, by: 100_000) {
            #expect(subject.write(content[start..<start + 100_000], at: start, prefix: start))
        }
        #expect(subject.hasher.hashedUpTo == 300_000)
        #expect(await subject.complete(size: content.count) == Fixture.sha256Hex(of: content))
    }

    /// A segment written ahead of the prefix is read back from the file once the prefix reaches it.
    @Test func bytesAheadOfThePrefixAreReadBackWhenItReachesThem() async throws {
        let subject = try Subject(digestFirst: true)
        let content = Fixture.content(size: 200_000, seed: 12)
        #expect(!subject.write(content[100_000...], at: 100_000, prefix: 0))
        #expect(subject.hasher.hashedUpTo == 0)
        #expect(subject.write(content[..<100_000], at: 0, prefix: 0))
        #expect(subject.hasher.hashedUpTo == 100_000)
        subject.hasher.catchUp(to: 200_000, fd: subject.fd)
        #expect(subject.hasher.hashedUpTo == 200_000)
        #expect(!subject.hasher.invalid)
        #expect(await subject.complete(size: content.count) == Fixture.sha256Hex(of: content))
    }

    /// A byte hashed already and written again: the digest is no longer trusted, and the whole file is hashed at the
    /// end; `reset` trusts it again.
    @Test func aRewrittenByteMakesTheWholeFileHashedAtTheEnd() async throws {
        let subject = try Subject(digestFirst: true)
        var content = Fixture.content(size: 100_000, seed: 13)
        #expect(subject.write(content[...], at: 0, prefix: 0))
        content.replaceSubrange(10..<20, with: [UInt8](repeating: 7, count: 10))
        #expect(!subject.write(content[10..<20], at: 10, prefix: 100_000))
        #expect(subject.hasher.invalid)
        #expect(await subject.complete(size: content.count) == Fixture.sha256Hex(of: content))
        subject.hasher.reset(prefix: 0)
        #expect(!subject.hasher.invalid && subject.hasher.hashedUpTo == 0)
    }

    /// Without `digestFirst`, nothing is read back before the end, and at most `backlogLimit` runs wait for a held
    /// digest queue: later runs are left to the end (bound, issue 32). Hashed runs' buffers come back.
    @Test func withoutDigestFirstAtMostTheBacklogLimitWaitsForTheDigest() async throws {
        let subject = try Subject(digestFirst: false)
        let piece = 10_000
        let content = Fixture.content(size: piece * (FileOrderDigest.backlogLimit + 4), seed: 14)
        subject.lane.suspend()
        let recycled = Counter()
        var queued = 0
        for start in stride(from: 0, to: content.count, by: piece) {
            let buffer = RunBuffer(capacity: piece)
            buffer.reset(startingAt: Int64(start))
            content[start..<start + piece].withUnsafeBytes { buffer.append($0) }
            _ = pwrite(subject.fd, buffer.bytes.baseAddress, buffer.count, off_t(start))
            if subject.hasher.hash(.run(buffer), at: Int64(start), prefix: Int64(start), recycle: { _ in recycled.add() }) {
                queued += 1
            }
        }
        #expect(queued == FileOrderDigest.backlogLimit)
        #expect(subject.hasher.hashedUpTo == Int64(piece * FileOrderDigest.backlogLimit))
        subject.hasher.catchUp(to: Int64(content.count), fd: subject.fd)  // not before the end
        #expect(subject.hasher.hashedUpTo == Int64(piece * FileOrderDigest.backlogLimit))
        subject.lane.resume()
        #expect(await subject.complete(size: content.count) == Fixture.sha256Hex(of: content))
        #expect(recycled.value == FileOrderDigest.backlogLimit)
        // The backlog drained: the next run continuing the prefix is hashed from memory again.
        subject.hasher.reset(prefix: 0)
        #expect(subject.write(content[..<piece], at: 0, prefix: 0))
    }

    /// A run's buffer may be hashed, recycled and staged again (emptied) as soon as it is queued: what the digest
    /// counts as hashed is the run's length when it was queued, never what the buffer holds after. (Counted after
    /// queuing, a run whose buffer was reused first moved `hashedUpTo` short: wrong digests of segmented downloads
    /// under load.) A race, so many runs; it cannot pass with the count read late unless every block ran later.
    @Test func aRunIsCountedAsItWasQueuedWhateverBecomesOfItsBuffer() async throws {
        let subject = try Subject(digestFirst: false)
        let piece = 4096
        let runs = 400
        let content = Fixture.content(size: piece * runs, seed: 15)
        _ = content.withUnsafeBytes { pwrite(subject.fd, $0.baseAddress, $0.count, 0) }
        var (hashed, short) = (0, 0)
        for index in 0..<runs {
            let start = index * piece
            let buffer = RunBuffer(capacity: piece)
            buffer.reset(startingAt: Int64(start))
            content[start..<start + piece].withUnsafeBytes { buffer.append($0) }
            let queued = subject.hasher.hash(.run(buffer), at: Int64(start), prefix: Int64(start)) { reused in
                reused.reset(startingAt: 0)  // staged again at once
            }
            // Not queued: the digest fell `backlogLimit` runs behind; the rest is read back at the end.
            guard queued else { break }
            hashed += 1
            if subject.hasher.hashedUpTo != Int64(start + piece) { short += 1 }
        }
        #expect(hashed > 0)
        #expect(short == 0)
        #expect(await subject.complete(size: content.count) == Fixture.sha256Hex(of: content))
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}
