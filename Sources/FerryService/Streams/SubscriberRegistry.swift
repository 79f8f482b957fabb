import Foundation

/// Who is subscribed: every open stream by key, the groups of shared streams, the private ones, and the count of
/// streams per `interval` (to know the finest one asked for).
///
/// Owner: `EventHub`'s serial queue (all but `count`, which any thread may read under its lock). Bookkeeping only:
/// the hub decides what each stream is sent.
final class SubscriberRegistry {
    private(set) var all: [Int: EventSubscription] = [:]
    /// Subscriptions fed from a queue of their own or from the log.
    private(set) var solo: [Int: EventSubscription] = [:]
    /// The same, split by what they follow: those following given jobs, under each of those jobs, and the rest (every
    /// job, or every job of a key). A published event is offered only to the streams that may want it
    /// (`forEachSolo(receiving:)`), not to all: with 1,000 streams each following one job, offering every event to
    /// every stream was most of a saturated hub's time.
    private var soloByJob: [String: [Int: EventSubscription]] = [:]
    private(set) var soloAnyJob: [Int: EventSubscription] = [:]
    private(set) var groups: [Int: SubscriberGroup] = [:]
    private var intervals: [Int: Int] = [:]
    private let countLock = NSLock()
    private var openCount = 0
    /// Told the finest interval any open stream asks for whenever it changes (on the hub's queue).
    var onFinestIntervalChange: (@Sendable (Int?) -> Void)?

    /// Open streams (any thread).
    var count: Int {
        countLock.lock(); defer { countLock.unlock() }
        return openCount
    }

    /// Streams fed by a group.
    var sharedCount: Int { groups.values.reduce(0) { $0 + $1.members.count } }

    /// Private streams reading the log, and the events held in private streams' queues and outboxes.
    var privateFigures: (readingLog: Int, heldEvents: Int) {
        var reading = 0, held = 0
        for subscription in solo.values {
            held += subscription.outbox.count
            switch subscription.delivery {
            case .log: reading += 1
            case .own(let own): held += own.pendingEventCount + own.pendingProgressCount
            case .shared: break
            }
        }
        return (reading, held)
    }

    /// The group of `interval`, made (its schedule starting after `after`) when none is open.
    func group(interval: Int, after: Int64, windowBytes: Int) -> SubscriberGroup {
        if let group = groups[interval] { return group }
        let group = SubscriberGroup(interval: interval, after: after, windowBytes: windowBytes)
        groups[interval] = group
        return group
    }

    /// Records a new stream, in its group (`.shared` delivery) or among the private ones.
    func add(_ subscription: EventSubscription) {
        all[subscription.key] = subscription
        place(subscription)
        countLock.lock(); openCount += 1; countLock.unlock()
        countInterval(subscription.interval, by: 1)
    }

    /// Forgets a stream; returns it if it was open.
    @discardableResult
    func remove(_ key: Int) -> EventSubscription? {
        guard let subscription = all.removeValue(forKey: key) else { return nil }
        unplace(subscription)
        countLock.lock(); openCount -= 1; countLock.unlock()
        countInterval(subscription.interval, by: -1)
        return subscription
    }

    /// Moves a stream between its group and the private ones after its delivery changed to `delivery`.
    func move(_ subscription: EventSubscription, to delivery: EventSubscription.Delivery) {
        unplace(subscription)
        subscription.delivery = delivery
        place(subscription)
    }

    /// Calls `body` with every private stream whose filter may admit an event of `jobID`.
    func forEachSolo(receiving jobID: String, _ body: (EventSubscription) -> Void) {
        for subscription in soloAnyJob.values { body(subscription) }
        if let following = soloByJob[jobID] { for subscription in following.values { body(subscription) } }
    }

    /// Forgets everything (shutdown).
    func removeAll() {
        for key in Array(all.keys) { remove(key) }
    }

    private func place(_ subscription: EventSubscription) {
        if case .shared(let interval, _, _) = subscription.delivery {
            groups[interval]?.members[subscription.key] = subscription
        } else {
            solo[subscription.key] = subscription
            if let jobs = Self.followed(by: subscription.filter) {
                for job in jobs { soloByJob[job, default: [:]][subscription.key] = subscription }
            } else {
                soloAnyJob[subscription.key] = subscription
            }
        }
    }

    private func unplace(_ subscription: EventSubscription) {
        if case .shared(let interval, _, _) = subscription.delivery, let group = groups[interval] {
            group.members[subscription.key] = nil
            if group.members.isEmpty { groups[interval] = nil }
        } else {
            solo[subscription.key] = nil
            if let jobs = Self.followed(by: subscription.filter) {
                for job in jobs {
                    soloByJob[job]?[subscription.key] = nil
                    if soloByJob[job]?.isEmpty == true { soloByJob[job] = nil }
                }
            } else {
                soloAnyJob[subscription.key] = nil
            }
        }
    }

    /// The jobs a filter admits events of, when it names them; nil when it admits any job's.
    private static func followed(by filter: EventFilter) -> Set<String>? {
        switch filter {
        case .allJobs: nil
        case .jobs(let ids): ids
        case .owned(_, let ids): ids
        }
    }

    private func countInterval(_ interval: Int, by change: Int) {
        let finest = intervals.keys.min()
        intervals[interval, default: 0] += change
        if intervals[interval] == 0 { intervals[interval] = nil }
        let now = intervals.keys.min()
        if now != finest { onFinestIntervalChange?(now) }
    }
}
