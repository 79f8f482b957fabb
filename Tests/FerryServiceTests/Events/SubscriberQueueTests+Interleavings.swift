import Foundation
import Testing
@testable import FerryService

/// Randomized interleavings of offers and takes on a fake clock, checked against the delivery rules.
@Suite struct SubscriberQueueInterleavingTests {
    typealias F = EventFixture

    struct Delivery { let event: ServerEvent; let time: Double; let step: Int }

    /// One random session: events offered at random times, take() at random times, sometimes while
    /// the stream is not writable; then a drain.
    struct Session {
        var offered: [(event: ServerEvent, step: Int)] = []
        var delivered: [Delivery] = []
        var queue: SubscriberQueue
        let admitted: (ServerEvent) -> Bool

        /// The latest admitted event offered per job, and the ids delivered so far.
        var lastOfferedByJob: [String: ServerEvent] = [:]
        var deliveredIDs: Set<Int64> = []

        /// After a writable take: a job whose latest offered event is a progress the subscriber is past
        /// (its id is at most lastDeliveredID) is dirty exactly when that progress was not delivered.
        func checkDirtyMarks(seed: UInt64, step: Int) {
            for (job, last) in lastOfferedByJob where last.kind == .progress && last.id <= queue.lastDeliveredID {
                #expect(deliveredIDs.contains(last.id) != queue.dirtyJobIDs.contains(job),
                        "seed \(seed) step \(step) job \(job)")
            }
        }

        init(seed: UInt64, mandatoryPercent: Int) {
            var random = SeededGenerator(seed: seed)
            let jobs = (0..<Int.random(in: 1...8, using: &random)).map { "j\($0)" }
            let filter: EventFilter = Bool.random(using: &random)
                ? .allJobs : .jobs(Set(jobs.filter { _ in Bool.random(using: &random) }))
            let start = Int64.random(in: 0...1_000, using: &random)
            queue = SubscriberQueue(after: start, filter: filter,
                                    intervalMilliseconds: Int.random(in: 50...1_000, using: &random))
            admitted = filter.admits
            var now = 0.0, nextID = start
            for step in 0..<2_000 {
                now += [0, 0, 0.01, 0.05, 0.1, 0.3].randomElement(using: &random)!
                if Int.random(in: 0..<10, using: &random) < 6 {
                    nextID += Int64.random(in: 1...3, using: &random)
                    let job = jobs.randomElement(using: &random)!
                    let roll = Int.random(in: 0..<100, using: &random)
                    let event = roll >= mandatoryPercent ? F.progress(nextID, job, bytes: Int(nextID))
                        : roll < mandatoryPercent / 8 ? F.removed(nextID, job) : F.job(nextID, job)
                    queue.offer(event, now: now)
                    offered.append((event, step))
                    if admitted(event) { lastOfferedByJob[job] = event }
                } else {
                    let writable = Int.random(in: 0..<4, using: &random) > 0
                    let due = queue.nextDueTime
                    let out = queue.take(now: now, writable: writable)
                    if writable {
                        // take() yields something exactly when nextDueTime said so.
                        #expect(out.isEmpty == !(due.map { $0 <= now } ?? false), "seed \(seed) step \(step)")
                        #expect(queue.pendingEventCount == 0, "job events go out at once")
                    } else {
                        #expect(out.isEmpty)
                    }
                    delivered += out.map { Delivery(event: $0, time: now, step: step) }
                    deliveredIDs.formUnion(out.map(\.id))
                    if writable { checkDirtyMarks(seed: seed, step: step) }
                }
            }
            // Drain: call take() whenever nextDueTime says so.
            var steps = 2_000
            while let due = queue.nextDueTime {
                now = max(now, due)
                steps += 1
                let out = queue.take(now: now, writable: true)
                #expect(!out.isEmpty, "nextDueTime promised something")
                if out.isEmpty { break }
                delivered += out.map { Delivery(event: $0, time: now, step: steps) }
            }
        }
    }

    @Test(arguments: Array(UInt64(1)...24))
    func deliveryRulesHoldUnderRandomInterleavings(seed: UInt64) {
        let session = Session(seed: seed, mandatoryPercent: 30)
        Self.checkCommonRules(session, seed: seed)
        // The last progress of each job arrives unless a later job event of that job superseded it
        // (then it was never due to arrive) or another job's event overtook it (then the job is dirty).
        for (job, events) in Dictionary(grouping: session.offered.map(\.event).filter(session.admitted), by: { $0.jobID! }) {
            guard let last = events.last, last.kind == .progress else { continue }
            let arrived = session.delivered.contains { $0.event.id == last.id }
            #expect(arrived != session.queue.dirtyJobIDs.contains(job), "seed \(seed) job \(job)")
        }
        #expect(session.queue.dirtyJobIDs.allSatisfy { job in
            session.offered.last { $0.event.jobID == job }?.event.kind == .progress
        })
    }

    @Test(arguments: Array(UInt64(100)...111))
    func withOnlyProgressEveryJobsLastProgressArrives(seed: UInt64) {
        let session = Session(seed: seed, mandatoryPercent: 0)
        Self.checkCommonRules(session, seed: seed)
        #expect(session.queue.dirtyJobIDs.isEmpty)
        for (job, events) in Dictionary(grouping: session.offered.map(\.event).filter(session.admitted), by: { $0.jobID! }) {
            #expect(session.delivered.last { $0.event.jobID == job }?.event == events.last, "seed \(seed) job \(job)")
        }
    }

    static func checkCommonRules(_ session: Session, seed: UInt64) {
        let delivered = session.delivered
        let ids = delivered.map(\.event.id)
        // Strictly increasing: no duplicates, never an id at or below one already received.
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed)")
        #expect(delivered.allSatisfy { session.admitted($0.event) }, "seed \(seed): filter")
        let offeredByID = Dictionary(uniqueKeysWithValues: session.offered.map { ($0.event.id, $0) })
        #expect(delivered.allSatisfy { offeredByID[$0.event.id]?.event == $0.event }, "seed \(seed): only offered events")
        // Every admitted job/removed event exactly once, in order.
        #expect(delivered.map(\.event).filter(\.isMandatory)
                == session.offered.map(\.event).filter { $0.isMandatory && session.admitted($0) }, "seed \(seed)")
        #expect(!session.queue.hasPending)
        #expect(session.queue.lastDeliveredID == ids.last ?? session.queue.lastDeliveredID)

        var nextOfSameJob: [Int64: (event: ServerEvent, step: Int)] = [:]
        var previousOfJob: [String: Int64] = [:]
        for offer in session.offered {
            if let previous = previousOfJob[offer.event.jobID!] { nextOfSameJob[previous] = offer }
            previousOfJob[offer.event.jobID!] = offer.event.id
        }
        var lastProgressTime: [String: Double] = [:]
        for delivery in delivered {
            let job = delivery.event.jobID!
            if delivery.event.kind == .removed { lastProgressTime[job] = nil }   // the job is gone
            guard delivery.event.kind == .progress else { continue }
            // At most one progress per job per interval.
            if let previous = lastProgressTime[job] {
                #expect(delivery.time - previous >= session.queue.interval - 1e-9, "seed \(seed) job \(job)")
            }
            lastProgressTime[job] = delivery.time
            // The latest values only, and never a progress superseded by a job event already offered.
            // (Offers come in id order, so the first newer event of the job is the earliest offered.)
            if let newer = nextOfSameJob[delivery.event.id] {
                #expect(newer.step >= delivery.step, "seed \(seed): \(delivery.event) delivered after \(newer.event) was offered")
            }
        }
    }

    /// A subscriber that reconnects at random points with its last id, replayed from an EventLog,
    /// receives every job/removed event exactly once and in order across its connections.
    @Test(arguments: Array(UInt64(200)...215))
    func reconnectingWithLastEventIDIsGapless(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let jobs = (0..<5).map { "j\($0)" }
        let base = Int64.random(in: 0...100, using: &random)
        let allocator = EventIDAllocator(startingAfter: base)
        var log = EventLog(startingAfter: base, capacity: 1_000_000)
        var queue = SubscriberQueue(after: base, intervalMilliseconds: 100)
        var received: [ServerEvent] = []
        var all: [ServerEvent] = []
        var now = 0.0
        var reconnects = 0
        for _ in 0..<3_000 {
            now += 0.02
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<12:
                let id = allocator.next()
                let job = jobs.randomElement(using: &random)!
                let event = Int.random(in: 0..<10, using: &random) < 7 ? F.progress(id, job) : F.job(id, job)
                log.append(event)
                all.append(event)
                queue.offer(event, now: now)
            case 12..<19:
                received += queue.take(now: now, writable: Int.random(in: 0..<3, using: &random) > 0)
            default:
                // The connection drops; pending events are lost with it. The client reconnects.
                reconnects += 1
                let lastID = received.last?.id ?? base
                queue = SubscriberQueue(after: lastID, intervalMilliseconds: 100)
                guard case .events(let replay) = log.replay(after: lastID, lastAllocated: allocator.lastAllocated) else {
                    Issue.record("unexpected reset, seed \(seed)")
                    return
                }
                for event in replay { queue.offer(event, now: now) }
            }
        }
        while let due = queue.nextDueTime {
            now = max(now, due)
            received += queue.take(now: now, writable: true)
        }
        #expect(reconnects > 50)
        let ids = received.map(\.id)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed)")
        #expect(received.filter(\.isMandatory) == all.filter(\.isMandatory), "seed \(seed)")
    }
}
