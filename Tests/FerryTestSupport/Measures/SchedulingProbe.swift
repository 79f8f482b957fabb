import Foundation
import Synchronization

/// Measures how late this process's threads get to run: a timer on a queue of its own asks to fire every `period`
/// seconds and records how late each firing came. On a busy machine (or a test process running a thousand tests) a
/// thread that is ready to run can wait a large part of a second; a timing check uses `lateSpans` to leave out what no
/// code could have done on time (`RateCheck`'s `frozen`). Start it before the work it watches, `stop()` it after.
public final class SchedulingProbe: Sendable {
    private let period: Double
    private let wakes = Mutex<[(due: Double, late: Double)]>([])
    /// The moment the next firing is due.
    private let next: Mutex<Double>
    /// Thread-safe for what is asked of it here (`schedule`, `cancel`); its handler runs on its own queue.
    private nonisolated(unsafe) let timer: DispatchSourceTimer

    public init(period: Double = 0.01) {
        self.period = period
        next = Mutex(Self.now() + period)
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ferry.test.scheduling-probe"))
        timer.setEventHandler { [weak self] in self?.fired() }
        timer.schedule(deadline: .now() + period, leeway: .nanoseconds(0))
        timer.resume()
    }

    private func fired() {
        let now = Self.now()
        let due = next.withLock { $0 }
        wakes.withLock { $0.append((due, now - due)) }
        let following = max(due + period, now)
        next.withLock { $0 = following }
        timer.schedule(deadline: .now() + (following - now), leeway: .nanoseconds(0))
    }

    public func stop() { timer.cancel() }

    /// Monotonic seconds, the clock `EventRecorder`'s and the engine's samples use.
    public static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The spans in which the probe's thread, ready to run, waited more than `longerThan` seconds.
    public func lateSpans(longerThan: Double) -> [ClosedRange<Double>] {
        wakes.withLock { $0.filter { $0.late > longerThan }.map { $0.due...($0.due + $0.late) } }
    }

    /// How many firings were recorded so far.
    public var wakeUps: Int { wakes.withLock { $0.count } }

    /// The longest wait and how many waits exceeded `longerThan`, for a failure's message.
    public func summary(longerThan: Double = 0.05) -> String {
        wakes.withLock { wakes in
            String(format: "%d wake-ups, %d more than %.0f ms late, the latest %.0f ms", wakes.count,
                   wakes.filter { $0.late > longerThan }.count, longerThan * 1000, (wakes.map(\.late).max() ?? 0) * 1000)
        }
    }
}
