import Dispatch
import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Synchronization
import Testing

struct GrowingFilesTests {
    /// What one watcher was told, in order.
    private final class Seen: Sendable {
        let extents = Mutex<[GrowingFiles.Extent]>([])
        func add(_ extent: GrowingFiles.Extent) { extents.withLock { $0.append(extent) } }
        var all: [GrowingFiles.Extent] { extents.withLock { $0 } }
    }

    @Test func watchersHearEveryChangeAndOnlyChanges() {
        let files = GrowingFiles()
        let seen = Seen()
        #expect(!files.isWatched("a"))
        let token = files.watch("a") { seen.add($0) }
        #expect(files.isWatched("a"))
        #expect(files.extent("a") == nil)
        files.emptied("a")
        files.publish("a", prefix: 100)
        files.publish("a", prefix: 100)  // no change: no news
        files.publish("b", prefix: 7)    // another job's
        files.publish("a", prefix: 250)
        files.closed("a")
        #expect(seen.all == [
            .init(prefix: 0, generation: 1, closed: false), .init(prefix: 100, generation: 1, closed: false),
            .init(prefix: 250, generation: 1, closed: false), .init(prefix: 250, generation: 1, closed: true),
        ])
        // A later writer that keeps the bytes continues the generation; one that empties the file starts the next.
        files.publish("a", prefix: 250)
        #expect(files.extent("a") == .init(prefix: 250, generation: 1, closed: false))
        files.emptied("a")
        #expect(files.extent("a") == .init(prefix: 0, generation: 2, closed: false))
        files.unwatch("a", token: token)
        files.publish("a", prefix: 300)
        #expect(seen.all.count == 6, "no news after unwatch")
    }

    @Test func entriesGoWithTheirWriterOrTheirLastWatcher() {
        let files = GrowingFiles()
        files.publish("a", prefix: 10)
        #expect(files.extent("a")?.prefix == 10, "an unwatched file's extent is kept while written: a reader may join")
        files.closed("a")
        #expect(files.extent("a") == nil, "closed and unwatched: forgotten")

        let token = files.watch("b") { _ in }
        files.publish("b", prefix: 5)
        files.closed("b")
        #expect(files.extent("b")?.closed == true, "kept while watched")
        files.unwatch("b", token: token)
        #expect(files.extent("b") == nil)

        let other = files.watch("c") { _ in }
        files.publish("c", prefix: 5)
        files.unwatch("c", token: other)
        #expect(files.extent("c")?.prefix == 5, "still being written: kept")
        #expect(!files.isWatched("c"))
    }
}

struct FileWriterGrowthTests {
    private final class Run: @unchecked Sendable {
        let queue = DispatchQueue(label: "test.writer.callbacks")
        let writer: FileWriter
        init(path: String, files: GrowingFiles) {
            writer = FileWriter(path: path, label: "test", callbackQueue: queue, digestFirst: false, growing: (files, "job"))
        }
        func open(keep: Bool) async -> Result<Int64, SystemError> {
            await withCheckedContinuation { c in writer.open(keepExisting: keep) { c.resume(returning: $0) } }
        }
        func write(_ bytes: [UInt8], at offset: Int64) async -> SystemError? {
            await withCheckedContinuation { c in writer.write(bytes, at: offset) { c.resume(returning: $0) } }
        }
        func truncate() async -> SystemError? {
            await withCheckedContinuation { c in writer.truncate { c.resume(returning: $0) } }
        }
        func close() async -> Int64 {
            await withCheckedContinuation { c in writer.close { c.resume(returning: $0) } }
        }
    }

    /// A reader learns how far the file is written without a gap, from the writer, as each write returns; a restart
    /// from zero is a new generation, and a writer that resumes the bytes keeps it.
    @Test func theWriterPublishesItsGaplessPrefix() async throws {
        let root = try Fixture.tempDirectory("ferry-growth-test")
        defer { Fixture.removeTree(root) }
        let files = GrowingFiles()
        let token = files.watch("job") { _ in }
        defer { files.unwatch("job", token: token) }
        let content = Fixture.content(size: 300_000, seed: 9)
        let run = Run(path: root + "/p", files: files)
        #expect(try await run.open(keep: false).get() == 0)
        let first = try #require(files.extent("job"))
        #expect(first.prefix == 0 && !first.closed)
        #expect(await run.write(Array(content[..<100_000]), at: 0) == nil)
        #expect(files.extent("job")?.prefix == 100_000)
        #expect(await run.write(Array(content[200_000...]), at: 200_000) == nil)
        #expect(files.extent("job")?.prefix == 100_000, "bytes past a gap are not readable yet")
        #expect(await run.write(Array(content[100_000..<200_000]), at: 100_000) == nil)
        #expect(files.extent("job") == .init(prefix: 300_000, generation: first.generation, closed: false))
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/p")) == Data(content), "what was published is on disk")

        #expect(await run.truncate() == nil)
        #expect(files.extent("job") == .init(prefix: 0, generation: first.generation + 1, closed: false))
        #expect(await run.write(Array(content[..<50_000]), at: 0) == nil)
        #expect(await run.close() == 50_000)
        #expect(files.extent("job") == .init(prefix: 50_000, generation: first.generation + 1, closed: true))

        let resumed = Run(path: root + "/p", files: files)
        #expect(try await resumed.open(keep: true).get() == 50_000)
        #expect(files.extent("job") == .init(prefix: 50_000, generation: first.generation + 1, closed: false))
        _ = await resumed.close()
    }
}
