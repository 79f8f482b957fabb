import FerryTestSupport
import Foundation
import Testing

/// Waiting for a `ferry serve` child process to answer, the one way for every suite that starts one.
enum ChildFerry {
    /// Polls `GET /healthz` on `port` every 50 ms until it answers 200; returns then. Throws, with the child's log,
    /// when the child exits first, or when `timeout` seconds have passed and at least 20 polls were answered or
    /// refused, so that a test process starved on a loaded machine is not taken for a Ferry that did not start.
    static func awaitHealthy(_ process: ChildProcess, port: Int, timeout: Double = 20) async throws {
        let client = TestClient(port: port)
        let started = Date()
        var polls = 0
        var last = "no answer"
        let outcome = await pollUntilAsync(timeout: timeout, interval: 0.05, minimumChecks: 20) { () -> Bool? in
            polls += 1
            do {
                let health = try await client.get("/healthz")
                if health.status == 200 { return true }
                last = "status \(health.status)"
            } catch {
                last = "\(error)"
            }
            return process.isRunning ? nil : false
        }
        if outcome == true { return }
        let log = process.standardError()
        let state = process.exitStatusIfExited().map { "it exited with status \($0)" } ?? "it still runs"
        _ = await process.stopped(grace: 1)
        throw TestClientError.timeout(String(format: "ferry did not start: no 200 from /healthz in %.1f s and %d polls (last: %@; %@): ",
                                             Date().timeIntervalSince(started), polls, last, state) + log.suffix(2000))
    }

    /// Runs `body` against a running child; when it throws, records whether the child still runs (or its exit
    /// status) and the end of its log before rethrowing, so a request that failed says what the server did.
    static func diagnosed<T>(_ process: ChildProcess, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            let state = process.exitStatusIfExited().map { "it exited with status \($0)" } ?? "it still runs"
            Issue.record("\(error); the ferry child: \(state); its log ends: \(process.standardError().suffix(3000))")
            throw error
        }
    }
}
