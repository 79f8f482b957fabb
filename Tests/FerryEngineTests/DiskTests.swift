import Dispatch
import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

struct DigestTests {
    /// The "abc" and empty vectors of each algorithm (FIPS 180 and RFC 1321).
    static let vectors: [(DigestAlgorithm, abc: String, empty: String)] = [
        (.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (.sha512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
         "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
        (.sha1, "a9993e364706816aba3e25717850c26c9cd0d89d", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        (.md5, "900150983cd24fb0d6963f7d28e17f72", "d41d8cd98f00b204e9800998ecf8427e"),
    ]

    @Test func knownVectors() {
        let empty = Digest()
        #expect(empty.finalize().sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let abc = Digest()
        abc.update(Array("abc".utf8))
        #expect(abc.finalize().sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let pieces = Digest()
        for byte in "abc".utf8 { pieces.update([byte]) }
        #expect(pieces.finalize().sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func everyAlgorithmAtOnceFromOneStream() {
        let all = Digest(DigestAlgorithm.allCases + [.sha256])
        #expect(all.algorithms == DigestAlgorithm.allCases, "repeats are dropped")
        for byte in "abc".utf8 { all.update([byte]) }
        let digests = all.finalize()
        for vector in Self.vectors {
            #expect(digests.hex[vector.0] == vector.abc, "\(vector.0)")
            #expect(digests.hex[vector.0]?.count == vector.0.hexLength)
        }
        all.reset()
        let empty = all.finalize()
        for vector in Self.vectors { #expect(empty.hex[vector.0] == vector.empty, "\(vector.0) after reset") }
        #expect(digests.matches(try! Checksum(algorithm: .md5, value: "900150983CD24FB0D6963F7D28E17F72")))
        #expect(!digests.matches(try! Checksum(algorithm: .md5, value: String(repeating: "0", count: 32))))
        #expect(!Digest().finalize().matches(try! Checksum(algorithm: .sha1, value: Self.vectors[2].empty)),
                "an algorithm not computed never matches")
    }

    @Test func fileDigestMatchesTheFixture() async throws {
        let root = try Fixture.tempDirectory("ferry-sha-test")
        defer { Fixture.removeTree(root) }
        try Fixture.writeFile(at: root + "/f", size: 3_000_000, seed: 2)
        let digests = try Digest.ofFile(root + "/f", algorithms: DigestAlgorithm.allCases)
        #expect(digests.sha256 == Fixture.sha256Hex(of: Fixture.content(size: 3_000_000, seed: 2)))
        for algorithm in DigestAlgorithm.allCases {
            #expect(digests.hex[algorithm] == (try await Fixture.digestHex(ofFile: root + "/f", algorithm: algorithm.rawValue)))
        }
    }
}

struct FileWriterTests {
    /// Runs writer operations and waits for their completions on a private queue.
    private final class Run: @unchecked Sendable {
        let queue = DispatchQueue(label: "test.writer.callbacks")
        let writer: FileWriter
        init(path: String, algorithms: [DigestAlgorithm] = []) {
            writer = FileWriter(path: path, label: "test", callbackQueue: queue, algorithms: algorithms)
        }

        func open(keep: Bool) async -> Result<Int64, SystemError> {
            await withCheckedContinuation { c in writer.open(keepExisting: keep) { c.resume(returning: $0) } }
        }
        func write(_ bytes: [UInt8], at offset: Int64) async -> SystemError? {
            await withCheckedContinuation { c in writer.write(bytes, at: offset) { c.resume(returning: $0) } }
        }
        func finish() async -> Result<(size: Int64, digests: FileDigests), SystemError> {
            await withCheckedContinuation { c in writer.finish { c.resume(returning: $0) } }
        }
        func close() async -> Int64 {
            await withCheckedContinuation { c in writer.close { c.resume(returning: $0) } }
        }
    }

    @Test func writesInOrderAndHashesAsItGoes() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 300_000, seed: 4)
        let run = Run(path: root + "/p")
        #expect(try await run.open(keep: false).get() == 0)
        for start in stride(from: 0, to: content.count, by: 70_000) {
            let end = min(content.count, start + 70_000)
            #expect(await run.write(Array(content[start..<end]), at: Int64(start)) == nil)
        }
        let result = try await run.finish().get()
        #expect(result.size == 300_000)
        #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
    }

    @Test func resumeHashesTheBytesOnDiskFirst() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 200_000, seed: 5)
        try Data(content[0..<80_000]).write(to: URL(fileURLWithPath: root + "/p"))
        let run = Run(path: root + "/p")
        #expect(try await run.open(keep: true).get() == 80_000)
        #expect(await run.write(Array(content[80_000...]), at: 80_000) == nil)
        let result = try await run.finish().get()
        #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
    }

    /// A resumed partial's other digest starts from the bytes already on disk too, so a checksum of any algorithm
    /// holds across a restart; out-of-order writes are read back into every algorithm.
    @Test func resumeComputesTheChecksumAlgorithmOverTheWholeFile() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 200_000, seed: 7)
        try Data(content).write(to: URL(fileURLWithPath: root + "/whole"))
        for algorithm in [DigestAlgorithm.sha512, .sha1, .md5] {
            try Data(content[0..<80_000]).write(to: URL(fileURLWithPath: root + "/p"))
            let run = Run(path: root + "/p", algorithms: [algorithm])
            #expect(try await run.open(keep: true).get() == 80_000)
            #expect(await run.write(Array(content[150_000...]), at: 150_000) == nil)
            #expect(await run.write(Array(content[80_000..<150_000]), at: 80_000) == nil)
            let result = try await run.finish().get()
            #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
            #expect(result.digests.hex[algorithm] == (try await Fixture.digestHex(ofFile: root + "/whole", algorithm: algorithm.rawValue)))
        }
    }

    @Test func outOfOrderWritesAreHashedFromTheFile() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 100_000, seed: 6)
        let run = Run(path: root + "/p")
        _ = await run.open(keep: false)
        #expect(await run.write(Array(content[50_000...]), at: 50_000) == nil)
        #expect(await run.write(Array(content[..<50_000]), at: 0) == nil)
        #expect(try await run.finish().get().digests.sha256 == Fixture.sha256Hex(of: content))
    }

    /// Staged pieces become one write per run: contiguous pieces join, a jump starts a new run, a full run is
    /// queued, and any other operation (here `finish`, with no `flush`) queues what is staged before itself.
    @Test func stagedPiecesAreWrittenInOrderWithEveryCompletion() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let piece = 16_384
        let size = RunStaging.runCapacity * 2 + 5 * piece + 123
        let content = Fixture.content(size: size, seed: 8)
        let run = Run(path: root + "/p")
        _ = await run.open(keep: false)
        // The second half first (a segment elsewhere in the file), then the first half; no flush in between.
        let half = size / 2
        let order = Array(stride(from: half, to: size, by: piece)) + Array(stride(from: 0, to: half, by: piece))
        let completions = Completions()
        for (index, start) in order.enumerated() {
            let end = min(start + piece, start < half ? half : size)
            content[start..<end].withUnsafeBytes { bytes in
                run.writer.stage(bytes, at: Int64(start)) { error in completions.record(index, error) }
            }
        }
        let result = try await run.finish().get()
        #expect(result.size == Int64(size))
        #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
        let seen = await completions.all(count: order.count, on: run.queue)
        #expect(seen.map(\.index) == Array(0..<order.count))
        #expect(seen.allSatisfy { $0.error == nil })
    }

    /// Runs are written partly with direct I/O (their block-aligned middles) and partly through the page cache
    /// (unaligned heads and tails): from an unaligned resume offset, in odd-sized pieces, with a second run elsewhere
    /// in the file, every byte lands where it belongs.
    @Test func stagedRunsFromUnalignedOffsetsLandByteForByte() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        // Small, so the test (debug build, on the cooperative pool) never holds a thread long: many runs still
        // come from the flushes every seven pieces.
        let size = 400_777
        let content = Fixture.content(size: size, seed: 9)
        let resumeAt = 5_003
        try Data(content[..<resumeAt]).write(to: URL(fileURLWithPath: root + "/p"))
        let run = Run(path: root + "/p")
        #expect(try await run.open(keep: true).get() == Int64(resumeAt))
        let piece = 12_345
        let jump = 250_999  // a second run, written first, as another segment would
        let order = Array(stride(from: jump, to: size, by: piece)) + Array(stride(from: resumeAt, to: jump, by: piece))
        let completions = Completions()
        for (index, start) in order.enumerated() {
            let end = min(start + piece, start < jump ? jump : size)
            content[start..<end].withUnsafeBytes { bytes in
                run.writer.stage(bytes, at: Int64(start)) { error in completions.record(index, error) }
            }
            if index % 7 == 0 { run.writer.flush() }
        }
        let result = try await run.finish().get()
        #expect(result.size == Int64(size))
        #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/p")) == Data(content))
        let seen = await completions.all(count: order.count, on: run.queue)
        #expect(seen.map(\.index) == Array(0..<order.count))
        #expect(seen.allSatisfy { $0.error == nil })
    }

    /// Completions seen by staged pieces, in the order they ran.
    private final class Completions: @unchecked Sendable {
        private var seen: [(index: Int, error: SystemError?)] = []
        private let lock = NSLock()
        func record(_ index: Int, _ error: SystemError?) { lock.withLock { seen.append((index, error)) } }
        /// Waits (after the callback queue drained) for the completions recorded so far.
        func all(count: Int, on queue: DispatchQueue) async -> [(index: Int, error: SystemError?)] {
            await withCheckedContinuation { c in queue.async { c.resume(returning: ()) } }
            return lock.withLock { seen }
        }
    }

    @Test func closeKeepsBytesAndOpenWithoutKeepTruncates() async throws {
        let root = try Fixture.tempDirectory("ferry-writer-test")
        defer { Fixture.removeTree(root) }
        let run = Run(path: root + "/p")
        _ = await run.open(keep: false)
        _ = await run.write([1, 2, 3, 4], at: 0)
        #expect(await run.close() == 4)
        #expect(try await run.open(keep: true).get() == 4)
        #expect(await run.close() == 4)
        #expect(try await run.open(keep: false).get() == 0)
        #expect(await run.close() == 0)
    }

    @Test func failuresCarryTheCallAndErrno() async throws {
        let run = Run(path: "/nonexistent-dir-ferry/p")
        guard case .failure(let error) = await run.open(keep: false) else {
            Issue.record("open in a missing directory must fail")
            return
        }
        #expect(error.call == "open")
        #expect(error.code == ENOENT)
    }
}
