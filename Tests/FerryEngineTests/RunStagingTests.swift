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
    /// `spareLimit` are kept while runs are in flight, and `caughtUpSpareLimit` once every run is back; a spare is
    /// reused before anything is allocated; closing the file drops them all.
    @Test func atMostTheSpareLimitIsKeptAndSparesAreReused() {
        let staging = RunStaging()
        let shipped = Shipped()
        let content = Fixture.content(size: 1000, seed: 5)
        // A stall: 3 × spareLimit runs shipped and none written yet.
        for index in 0..<(3 * RunStaging.spareLimit) {
            stage(staging, content[...], at: index * 10_000, into: shipped)
        }
        staging.flush(ship: shipped.ship)
        let buffers = shipped.runs.map(\.buffer)
        #expect(buffers.count == 3 * RunStaging.spareLimit)
        for buffer in buffers.dropLast() { staging.recycle(buffer) }
        #expect(staging.spareCount == RunStaging.spareLimit, "one run still in flight")

        stage(staging, content[...], at: 0, into: shipped)
        staging.flush(ship: shipped.ship)
        #expect(staging.spareCount == RunStaging.spareLimit - 1)
        #expect(buffers.contains { $0 === shipped.runs.last?.buffer }, "the run was staged in a spare")

        // Caught up: every run back; what the stall allocated is let go.
        staging.recycle(buffers.last!)
        staging.recycle(shipped.runs.last!.buffer)
        #expect(staging.spareCount == RunStaging.caughtUpSpareLimit)
        staging.dropSpares()
        #expect(staging.spareCount == 0)
    }

    /// A slow download alternates two buffers: shipped, written and recycled one at a time, it allocates none after
    /// the first two.
    @Test func aWriterThatKeepsUpReusesItsBuffers() {
        let staging = RunStaging()
        let shipped = Shipped()
        let content = Fixture.content(size: 1000, seed: 8)
        var seen: [ObjectIdentifier] = []
        for index in 0..<20 {
            stage(staging, content[...], at: index * 1000, into: shipped)
            staging.flush(ship: shipped.ship)
            let buffer = shipped.runs.last!.buffer
            if !seen.contains(ObjectIdentifier(buffer)) { seen.append(ObjectIdentifier(buffer)) }
            staging.recycle(buffer)
            #expect(staging.spareCount <= RunStaging.caughtUpSpareLimit)
        }
        #expect(seen.count == 1, "one buffer, reused: \(seen.count)")
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
