import Foundation

// Waiting without holding a thread of the Swift concurrency pool.
//
// The pool has as many threads as cores (two on the machines this runs on). A test or fixture that blocks one of
// them (usleep in a polling loop, waitpid, a blocking socket or libpq call) takes it from every other test of the
// process: two fixtures waiting for a server to come up froze everything else, including tests polling /healthz
// against a deadline (issue 24). So in async code the tests only await: `Task.sleep` between polls (`pollUntil`), and
// blocking work runs on a thread of its own (`offThePool`). Fixtures' synchronous waits are `noasync`, so the
// compiler refuses them in async code.

/// Runs blocking work (a blocking socket exchange, libpq, a long file scan) on a thread of its own and awaits it.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}

/// `offThePool` for work that cannot throw and returns nothing.
public func offThePool(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            work()
            continuation.resume()
        }
        thread.start()
    }
}

/// Sleeps `seconds` without holding a pool thread (a cancelled task wakes early).
public func pause(_ seconds: Double) async {
    try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
}

/// Evaluates `check` (which must not block for long) every `interval` seconds until it returns a value or `timeout`
/// seconds have passed; `nil` then. Awaits between checks, holding no pool thread.
///
/// The deadline counts only checks that were made: when the process is starved (a loaded machine) the wait is
/// extended until at least `minimumChecks` checks have run, so a stall of the test process itself is not taken for
/// the condition's failure.
public func pollUntil<T>(
    timeout: Double, interval: Double = 0.01, minimumChecks: Int = 5, _ check: () throws -> T?
) async rethrows -> T? {
    let deadline = Date().addingTimeInterval(timeout)
    var checks = 0
    while true {
        if let value = try check() { return value }
        checks += 1
        if Date() >= deadline && checks >= minimumChecks { return nil }
        await pause(interval)
    }
}

/// `pollUntil` for a check that awaits.
public func pollUntilAsync<T>(
    timeout: Double, interval: Double = 0.01, minimumChecks: Int = 5, _ check: () async throws -> T?
) async rethrows -> T? {
    let deadline = Date().addingTimeInterval(timeout)
    var checks = 0
    while true {
        if let value = try await check() { return value }
        checks += 1
        if Date() >= deadline && checks >= minimumChecks { return nil }
        await pause(interval)
    }
}
