@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// `RunStaging`: how pieces join runs, and the bound of a writer's run memory (issue 32): the staged run never holds
/// more than `runCapacity`, and at most `spareLimit` spares are kept, whatever is recycled.
struct RunStagingTests {
    /// Runs shipped, with their bytes copied out (the buffer is reused once recycled).
    private final class Shipped {
        var runs: [(offset: Int64, bytes: [UInt8], completions: Int, buffer: RunBuffer)] = []
        func ship(_ run: RunStaging.Run) {
            runs.append((run.offset, Array(run.buffer.bytes), run.completions.count, run.buffer))
        }
    }

    private func stage(_ staging: RunStaging, _ bytes: ArraySlice<UInt8>, at offset: Int, into shipped: Shipped) {
        bytes.withUnsafeBytes { raw in
            staging.stage(raw, at: Int64(offset), completion: { _ in }, ship: shipped.ship)
        }
    }

    @Test func contiguousPiecesJoinOneRunAndAJumpShipsIt() {
        let staging = RunStaging()
        let shipped = Shipped()
        let content = Fixture.content(size: 30_000, seed: 3)
        stage(staging, content[0..<10_000], at: 0, into: shipped)
        stage(staging, content[10_000..<20_000], at: 10_000, into: shipped)
        #expect(shipped.runs.isEmpty)
        #expect(staging.stagedCount == 20_000)
        stage(staging, content[25_000..<30_000], at: 25_000, into: shipped)  // a jump: the run before ships
        #expect(shipped.runs.count == 1)
        #expect(shipped.runs[0].offset == 0 && shipped.runs[0].bytes == Array(content[0..<20_000]))
        #expect(shipped.runs[0].completions == 2)
        staging.flush(ship: shipped.ship)
        staging.flush(ship: shipped.ship)  // nothing staged: nothing shipped
        #expect(shipped.runs.count == 2)
        #expect(shipped.runs[1].offset == 25_000 && shipped.runs[1].bytes == Array(content[25_000...]))
        #expect(staging.stagedCount == 0)
    }

    /// Bound: a burst of 5 MiB staged without a flush is shipped in runs of at most `runCapacity`; what is staged
    /// never exceeds it, and the bytes arrive whole and in order.
    @Test func aBurstBeyondARunIsShippedInRunsOfAtMostItsCapacity() {
        let staging = RunStaging()
        let shipped = Shipped()
        let piece = 100_000
        let content = Fixture.content(size: 5 * RunStaging.runCapacity + 12_345, seed: 4)
        var largestStaged = 0
        for start in stride(from: 0, to: content.count, by: piece) {
            stage(staging, content[start..<min(content.count, start + piece)], at: start, into: shipped)
            largestStaged = max(largestStaged, staging.stagedCount)
        }
        staging.flush(ship: shipped.ship)
        #expect(largestStaged <= RunStaging.runCapacity)
        #expect(shipped.runs.count >= 6)
        #expect(shipped.runs.allSatisfy { $0.bytes.count <= RunStaging.runCapacity && $0.buffer.capacity == RunStaging.runCapacity })
        #expect(shipped.runs.flatMap(\.bytes) == content)
        #expect(shipped.runs.map(\.completions).reduce(0, +) == (content.count + piece - 1) / piece)
    }

    /// Bound: however many written runs come back (a writer whose runs were all in flight at once), at most
    /// `spareLimit` are kept; a spare is reused before anything is allocated; closing the file drops them all.
    @Test func atMostTheSpareLimitIsKeptAndSparesAreReused() {
        let staging = RunStaging()
        let buffers = (0..<(3 * RunStaging.spareLimit)).map { _ in RunBuffer(capacity: RunStaging.runCapacity) }
        for buffer in buffers { staging.recycle(buffer) }
        #expect(staging.spareCount == RunStaging.spareLimit)
        staging.recycle(RunBuffer(capacity: 4096))  // not of the run size: never kept
        #expect(staging.spareCount == RunStaging.spareLimit)

        let shipped = Shipped()
        let content = Fixture.content(size: 1000, seed: 5)
        stage(staging, content[...], at: 0, into: shipped)
        staging.flush(ship: shipped.ship)
        #expect(staging.spareCount == RunStaging.spareLimit - 1)
        #expect(buffers.contains { $0 === shipped.runs[0].buffer }, "the run was staged in a spare")

        staging.dropSpares()
        #expect(staging.spareCount == 0)
    }

    /// A piece larger than a run (libcurl's never are) is staged alone in a buffer of its size, never kept.
    @Test func aPieceLargerThanARunGetsABufferOfItsOwn() {
        let staging = RunStaging()
        let shipped = Shipped()
        let content = Fixture.content(size: RunStaging.runCapacity + 10, seed: 6)
        stage(staging, content[...], at: 0, into: shipped)
        staging.flush(ship: shipped.ship)
        #expect(shipped.runs.count == 1 && shipped.runs[0].bytes == content)
        staging.recycle(shipped.runs[0].buffer)
        #expect(staging.spareCount == 0)
    }
}
