import Foundation

/// How often the retention sweep runs for a retention period: often enough that a job outlives its
/// retention by at most about a quarter of it, never more than once a second, at least once a minute.
enum RetentionSchedule {
    static func interval(for retention: TimeInterval) -> TimeInterval {
        min(60, max(1, retention / 4))
    }
}
