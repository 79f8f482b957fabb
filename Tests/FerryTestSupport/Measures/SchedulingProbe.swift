import Foundation
import Synchronization

/// Measures how late this process's threads get to run: a thread of its own asks to wake every `period` seconds and
/// records how late each wake-up came. On a busy machine (or a test process running a thousand tests) a thread that
/// is ready to run can wait a large part of a second; a timing check uses `lateSpans` to leave out what no code could
/// have done on time (`RateCheck`'s `frozen`). Start it before the work it watches, `stop()` it after.
public final class SchedulingProbe: Sendable {
    private let period: Double
    private let wakes = Mutex<[(due: Double, late: Double)]>([])
    private let running = Atomic<Bool>(true)

    public init(period: Double = 0.01) {
        self.period = period
        let thread = Thread { [self] in
            var due = Self.now() + period
            while running.load(ordering: .relaxed) {
                let wait = due - Self.now()
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
                let now = Self.now()
                wakes.withLock { $0.append((due, now - due)) }
                due = max(due + period, now)
            }
        }
        thread.start()
    }

    public func stop() { running.store(false, ordering: .relaxed) }

    /// Monotonic seconds, the clock `EventRecorder`'s and the engine's samples use.
    public static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The spans in which the probe's thread, ready to run, waited more than `longerThan` seconds.
    public func lateSpans(longerThan: Double) -> [ClosedRange<Double>] {
        wakes.withLock { $0.filter { $0.late > longerThan }.map { $0.due...($0.due + $0.late) } }
    }

    /// The longest wait and how many waits exceeded `longerThan`, for a failure's message.
    public func summary(longerThan: Double = 0.05) -> String {
        wakes.withLock { wakes in
            String(format: "%d wake-ups, %d more than %.0f ms late, the latest %.0f ms", wakes.count,
                   wakes.filter { $0.late > longerThan }.count, longerThan * 1000, (wakes.map(\.late).max() ?? 0) * 1000)
        }
    }
}
