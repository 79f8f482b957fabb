import Foundation
import Synchronization
import Testing
@testable import FerryService

@Suite("Memory returner")
struct MemoryReturnerTests {
    /// It checks on its own queue every interval until stopped; no task of the cooperative pool is involved.
    @Test func checksEveryIntervalUntilStopped() async throws {
        let checks = Mutex(0)
        let returner = MemoryReturner(interval: .milliseconds(20)) { checks.withLock { $0 += 1 } }
        let deadline = ContinuousClock.now + .seconds(30)
        while checks.withLock({ $0 }) < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(checks.withLock { $0 } >= 3)
        returner.stop()
        // A check already under way when `stop` came may still finish; none starts after it.
        try await Task.sleep(for: .milliseconds(50))
        let stopped = checks.withLock { $0 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(checks.withLock { $0 } == stopped)
    }
}
