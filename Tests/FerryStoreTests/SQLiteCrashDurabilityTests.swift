import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// A writer process killed with SIGKILL loses nothing it was told had been stored.
///
/// The test re-runs this very test binary as a child with `FERRY_STORE_CRASH_CHILD_DB` set, which enables
/// `crashChildWritesUntilKilled`: it writes in a loop and appends each iteration number to a log only after the
/// store's calls returned. The parent kills it mid-stream, reopens the database and checks every logged write.
@Suite("SQLiteJobStore crash durability")
struct SQLiteCrashDurabilityTests {
    static let databaseVariable = "FERRY_STORE_CRASH_CHILD_DB"
    static let logVariable = "FERRY_STORE_CRASH_CHILD_LOG"

    @Test func committedWritesSurviveSIGKILL() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-crash")
        defer { directory.remove() }
        let database = directory.path + "/jobs.sqlite"
        let log = directory.path + "/committed.log"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))

        let child = Process()
        child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        child.arguments = ["--testing-library", "swift-testing", "--filter", "crashChildWritesUntilKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.databaseVariable] = database
        environment[Self.logVariable] = log
        child.environment = environment
        child.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        child.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try child.run()
        let pid = child.processIdentifier
        defer {
            if child.isRunning { kill(pid, SIGKILL) }
            Thread.detachNewThread { child.waitUntilExit() }
        }

        // Let it commit a few hundred iterations, then kill it without warning.
        let deadline = ContinuousClock.now + .seconds(60)
        while committedIterations(log).count < 300, child.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(child.isRunning, "the writer stopped before it was killed")
        kill(pid, SIGKILL)
        await offThePool { child.waitUntilExit() }
        #expect(child.terminationReason == .uncaughtSignal)

        let committed = committedIterations(log)
        #expect(committed.count >= 300)
        #expect(committed == Array(0..<committed.count))

        let store = try await SQLiteJobStore(path: database)
        #expect(try await store.pragma("integrity_check") == "ok")
        let jobs = Dictionary(uniqueKeysWithValues: try await store.all().map { ($0.id, $0) })
        for iteration in committed {
            let updated = jobs["c\(iteration)-a"]
            #expect(updated?.state == .finished && updated?.attempts == iteration, "iteration \(iteration)")
            #expect(jobs["c\(iteration)-b"] != nil, "iteration \(iteration)")
        }
        let last = try #require(try await store.value(forKey: "last").flatMap { Int($0) })
        #expect(last >= committed.last ?? 0)
        // A batch is all or nothing even when the kill lands mid-transaction.
        #expect(jobs.count % 2 == 0)
        // And the store keeps working where the writer stopped.
        let next = try await store.insert([.make("after-crash")])
        #expect(next[0].sequence > jobs.values.map(\.sequence).max() ?? 0)
        await store.close()
    }

    /// The child half of `committedWritesSurviveSIGKILL`; runs only when that test starts it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[databaseVariable] != nil))
    func crashChildWritesUntilKilled() async throws {
        let environment = ProcessInfo.processInfo.environment
        let store = try await SQLiteJobStore(path: try #require(environment[Self.databaseVariable]))
        let logPath = try #require(environment[Self.logVariable])
        let log = try #require(FileHandle(forWritingAtPath: logPath))
        let started = ContinuousClock.now
        var iteration = 0
        // Bounded, in case the parent dies without killing us.
        while ContinuousClock.now - started < .seconds(120) {
            let inserted = try await store.insert([.make("c\(iteration)-a"), .make("c\(iteration)-b")])
            var job = inserted[0]
            job.state = .finished
            job.attempts = iteration
            try await store.update(job)
            try await store.setValue("\(iteration)", forKey: "last")
            log.write(Data("\(iteration)\n".utf8))  // only after every call above returned
            iteration += 1
        }
        await store.close()
    }

    /// Whole lines of the child's log (a line cut by the kill is ignored).
    private func committedIterations(_ path: String) -> [Int] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a partial line
        return lines.compactMap { Int($0) }
    }
}
