import Dispatch
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// The writer's segment side: preallocation with a sidecar, hashing as the prefix grows, reopening.
struct SegmentedWriterTests {
    private final class Run: @unchecked Sendable {
        let queue = DispatchQueue(label: "test.segmented.writer")
        let writer: FileWriter
        let path: String
        let segmentsPath: String
        init(root: String) {
            path = root + "/p.part"
            segmentsPath = root + "/p.segments"
            writer = FileWriter(path: path, segmentsPath: segmentsPath, label: "test", callbackQueue: queue)
        }

        func open(keep: Bool, validator: String? = nil, total: Int64? = nil) async -> Result<FileWriter.OpenedPartial, SystemError> {
            await withCheckedContinuation { c in writer.openPartial(keepExisting: keep, validator: validator, total: total) { c.resume(returning: $0) } }
        }
        func prepare(_ sidecar: SegmentSidecar) async -> SystemError? {
            await withCheckedContinuation { c in writer.prepareSegments(sidecar) { c.resume(returning: $0) } }
        }
        func save(_ sidecar: SegmentSidecar) async -> SystemError? {
            await withCheckedContinuation { c in writer.saveSegments(sidecar) { c.resume(returning: $0) } }
        }
        func write(_ bytes: ArraySlice<UInt8>, at offset: Int) async -> SystemError? {
            await withCheckedContinuation { c in writer.write(Array(bytes), at: Int64(offset)) { c.resume(returning: $0) } }
        }
        func truncate() async -> SystemError? {
            await withCheckedContinuation { c in writer.truncate { c.resume(returning: $0) } }
        }
        func finish() async -> Result<(size: Int64, digests: FileDigests), SystemError> {
            await withCheckedContinuation { c in writer.finish { c.resume(returning: $0) } }
        }
        func close() async -> Int64 {
            await withCheckedContinuation { c in writer.close { c.resume(returning: $0) } }
        }
        var fileSize: Int64? {
            var info = stat()
            return stat(path, &info) == 0 ? Int64(info.st_size) : nil
        }
        var sidecarExists: Bool { access(segmentsPath, F_OK) == 0 }
    }

    @Test func prepareWritesTheSidecarThenPreallocates() async throws {
        let root = try Fixture.tempDirectory("ferry-segwriter-test")
        defer { Fixture.removeTree(root) }
        let run = Run(root: root)
        _ = try await run.open(keep: false).get()
        let sidecar = SegmentSidecar(validator: "\"v\"", table: .plan(total: 300_000, from: 0, count: 3))
        #expect(await run.prepare(sidecar) == nil)
        #expect(run.fileSize == 300_000)
        #expect(SegmentSidecar.decode(try String(contentsOfFile: run.segmentsPath, encoding: .utf8)) == sidecar)
        #expect(await run.truncate() == nil)
        #expect(run.fileSize == 0)
        #expect(!run.sidecarExists)
    }

    @Test func outOfOrderSegmentsAreHashedAsThePrefixGrows() async throws {
        let root = try Fixture.tempDirectory("ferry-segwriter-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 300_000, seed: 31)
        let run = Run(root: root)
        _ = try await run.open(keep: false).get()
        #expect(await run.prepare(SegmentSidecar(validator: "\"v\"", table: .plan(total: 300_000, from: 0, count: 3))) == nil)
        // Segments 2 and 3 first, in pieces; segment 1 last.
        #expect(await run.write(content[200_000..<250_000], at: 200_000) == nil)
        #expect(await run.write(content[100_000..<200_000], at: 100_000) == nil)
        #expect(await run.write(content[250_000..<300_000], at: 250_000) == nil)
        #expect(await run.write(content[0..<60_000], at: 0) == nil)
        #expect(await run.write(content[60_000..<100_000], at: 60_000) == nil)
        let result = try await run.finish().get()
        #expect(result.size == 300_000)
        #expect(result.digests.sha256 == Fixture.sha256Hex(of: content))
        #expect(try Fixture.sha256Hex(ofFile: run.path) == result.digests.sha256)
        #expect(!run.sidecarExists)
    }

    @Test func reopeningWithTheSidecarHashesThePrefixAndContinues() async throws {
        let root = try Fixture.tempDirectory("ferry-segwriter-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 200_000, seed: 32)
        var table = SegmentTable.plan(total: 200_000, from: 0, count: 2)
        do {
            let run = Run(root: root)
            _ = try await run.open(keep: false).get()
            #expect(await run.prepare(SegmentSidecar(validator: "\"v\"", table: table)) == nil)
            #expect(await run.write(content[0..<30_000], at: 0) == nil)
            #expect(await run.write(content[100_000..<170_000], at: 100_000) == nil)
            table.recordWritten(start: 0, upTo: 30_000)
            table.recordWritten(start: 100_000, upTo: 170_000)
            #expect(await run.save(SegmentSidecar(validator: "\"v\"", table: table)) == nil)
            #expect(await run.close() == 200_000)
        }
        let run = Run(root: root)
        guard case .segmented(let sidecar) = try await run.open(keep: true, validator: "\"v\"", total: 200_000).get() else {
            Issue.record("the sidecar was not used")
            return
        }
        #expect(sidecar.table == table.compacted())
        #expect(await run.write(content[30_000..<100_000], at: 30_000) == nil)
        #expect(await run.write(content[170_000..<200_000], at: 170_000) == nil)
        #expect(try await run.finish().get().digests.sha256 == Fixture.sha256Hex(of: content))
    }

    @Test func aSidecarThatDoesNotFitEmptiesTheFile() async throws {
        let root = try Fixture.tempDirectory("ferry-segwriter-test")
        defer { Fixture.removeTree(root) }
        for (validator, total) in [("\"other\"", Int64(100_000)), ("\"v\"", Int64(99_999))] {
            let run = Run(root: root)
            _ = try await run.open(keep: false).get()
            #expect(await run.prepare(SegmentSidecar(validator: "\"v\"", table: .plan(total: 100_000, from: 0, count: 2))) == nil)
            _ = await run.close()
            let again = Run(root: root)
            guard case .discarded = try await again.open(keep: true, validator: validator, total: total).get() else {
                Issue.record("a sidecar for \(validator) and \(total) bytes was used")
                continue
            }
            #expect(again.fileSize == 0)
            #expect(!again.sidecarExists)
            _ = await again.close()
        }
        // A torn sidecar, or one whose file is not preallocated, is not trusted either.
        let run = Run(root: root)
        _ = try await run.open(keep: false).get()
        _ = await run.close()
        try "ferry-segments 1\ntotal 10".write(toFile: run.segmentsPath, atomically: false, encoding: .utf8)
        guard case .discarded = try await Run(root: root).open(keep: true).get() else {
            Issue.record("a torn sidecar was used")
            return
        }
        try SegmentSidecar(validator: "\"v\"", table: .plan(total: 10, from: 0, count: 1)).encoded()
            .write(toFile: run.segmentsPath, atomically: false, encoding: .utf8)
        guard case .discarded = try await Run(root: root).open(keep: true).get() else {
            Issue.record("a sidecar for a file that is not preallocated was used")
            return
        }
    }
}

struct SpoolSegmentsTests {
    @Test func sizesCountWhatTheSidecarSaysAndRemovalTakesBoth() throws {
        let root = try Fixture.tempDirectory("ferry-spool-segments-test")
        defer { Fixture.removeTree(root) }
        let spool = try Spool(root: root + "/spool")
        #expect(spool.segmentsPath(for: "j") == spool.root + "/partial/j.segments")
        try Data(count: 1_000).write(to: URL(fileURLWithPath: spool.partialPath(for: "j")))
        #expect(spool.partialSize(jobID: "j") == 1_000)
        var table = SegmentTable.plan(total: 1_000, from: 0, count: 2)
        table.recordWritten(start: 0, upTo: 100)
        table.recordWritten(start: 500, upTo: 900)
        try AtomicFile.write(spool.segmentsPath(for: "j"), SegmentSidecar(validator: "\"v\"", table: table).encoded())
        #expect(spool.partialSize(jobID: "j") == 500)
        #expect(spool.partialPrefix(jobID: "j") == 100)
        #expect(spool.partialJobIDs() == ["j"])
        // A leftover sidecar alone is listed, so that recovery removes it.
        try AtomicFile.write(spool.segmentsPath(for: "orphan"), SegmentSidecar(validator: "\"v\"", table: table).encoded())
        #expect(spool.partialJobIDs() == ["j", "orphan"])
        #expect(spool.partialSize(jobID: "orphan") == 0)
        spool.removePartial(jobID: "j")
        spool.removePartial(jobID: "orphan")
        #expect(spool.partialJobIDs().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: spool.segmentsPath(for: "j")))
    }
}
