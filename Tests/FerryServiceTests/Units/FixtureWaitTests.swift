import FerryTestSupport
import Foundation
import Testing

/// The tests' waits hold no thread of the Swift concurrency pool (issue 24): the pool has one thread per core, and a
/// fixture that blocked one in a polling loop froze every other test of the process.
@Suite("Fixture waits leave the concurrency pool free")
struct FixtureWaitTests {
    /// As many children as the pool has threads are waited for at once (`exit(within:)`), and meanwhile this task
    /// still wakes from 10 ms sleeps. Blocking waits would hold every pool thread for the children's 1.5 s: this
    /// task could not wake once before they ended (one tick instead of dozens).
    @Test func waitingForChildrenLeavesThePoolFree() async throws {
        // Other tests of this process may hold the pool for a moment (one blocks it on purpose for under 2 s), and a
        // loaded machine slows every wake-up (a full parallel run beside three builds, load 8 on 2 cores, saw 1-2 a
        // second): a measurement counts if any of three attempts shows more than one. Blocking waits allow exactly
        // one (the first sleep ends only with the children, after the 1 s window), every time.
        var attempts: [Int] = []
        for _ in 0..<3 {
            let ticks = try await ticksWhileChildrenAreWaitedFor()
            attempts.append(ticks)
            if ticks >= 2 { break }
        }
        #expect(attempts.contains { $0 >= 2 }, "wake-ups of a 10 ms sleep in 1 s while children were waited for: \(attempts)")
    }

    private func ticksWhileChildrenAreWaitedFor() async throws -> Int {
        let width = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let children = try (0..<width).map { _ in try ChildProcess.launch("/bin/sleep", ["1.5"]) }
        defer { for child in children { child.stopInBackground(grace: 1) { Fixture.removeTree(child.outputDirectory) } } }
        async let statuses = withTaskGroup(of: Int32?.self) { group in
            for child in children { group.addTask { await child.exit(within: 20) } }
            return await group.reduce(into: [Int32?]()) { $0.append($1) }
        }
        let started = Date()
        var ticks = 0
        while Date().timeIntervalSince(started) < 1 {
            await pause(0.01)
            ticks += 1
        }
        #expect(await statuses == Array(repeating: 0, count: width))
        return ticks
    }

    /// `pollUntil`'s deadline counts only checks made: past it, the check still runs until `minimumChecks` were made.
    @Test func pollingPastItsDeadlineStillMakesTheMinimumChecks() async {
        var checks = 0
        let none: Int? = await pollUntil(timeout: 0, interval: 0.001, minimumChecks: 4) { () -> Int? in
            checks += 1
            return nil
        }
        #expect(none == nil)
        #expect(checks == 4)
        let found = await pollUntil(timeout: 5, interval: 0.001) { () -> Int? in
            checks += 1
            return checks == 7 ? checks : nil
        }
        #expect(found == 7)
    }

    /// `stopInBackground` returns at once, and the child is stopped and reaped, then `cleanup` runs, on its thread.
    @Test func stoppingInTheBackgroundReturnsAtOnceAndStopsTheChild() async throws {
        let child = try ChildProcess.launch("/bin/sh", ["-c", "trap '' TERM; echo ready; sleep 30"])
        #expect(await pollUntil(timeout: 10) { child.standardOutput().contains("ready") ? true : nil } == true)
        let cleaned = ManagedFlag()
        let began = Date()
        child.stopInBackground(grace: 0.5) { cleaned.set() }
        #expect(Date().timeIntervalSince(began) < 0.4, "returned before the grace period")
        let status = await child.exit(within: 20)
        #expect(status == 128 + SIGKILL, "SIGTERM ignored, SIGKILL after the grace period")
        #expect(await pollUntil(timeout: 5) { cleaned.isSet ? true : nil } == true)
        Fixture.removeTree(child.outputDirectory)
    }
}

/// A flag set on one thread and read on another.
private final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }

    /// The output directory `launch` made goes with the last reference to the child; one given by the caller stays.
    @Test func theOutputDirectoryMadeForAChildGoesWithIt() async throws {
        var child: ChildProcess? = try ChildProcess.launch("/bin/sh", ["-c", "echo out"])
        let made = try #require(child?.outputDirectory)
        #expect(await child?.exit(within: 20) == 0)
        #expect(child?.standardOutput() == "out\n")
        child = nil
        #expect(!FileManager.default.fileExists(atPath: made), "removed with the child")

        let given = try Fixture.tempDirectory("ferry-given")
        defer { Fixture.removeTree(given) }
        var kept: ChildProcess? = try ChildProcess.launch("/bin/true", [], outputDirectory: given)
        #expect(await kept?.exit(within: 20) == 0)
        kept = nil
        #expect(FileManager.default.fileExists(atPath: given + "/true.stdout"), "the caller's directory is the caller's")
    }
}
