import Dispatch
import Testing
@testable import FerryHTTP
@testable import FerryService

/// The registry's bookkeeping of private streams by the jobs they follow (`forEachSolo(receiving:)`).
@Suite struct SubscriberRegistryTests {
    private func subscription(_ key: Int, _ filter: EventFilter,
                              _ delivery: EventSubscription.Delivery = .log(after: 0)) -> EventSubscription {
        let stream = ResponseStream(queue: DispatchQueue(label: "test.stream"))
        return EventSubscription(key: key, delivery: delivery, interval: 500, filter: filter, stream: stream,
                                 writer: EventStreamWriter(stream: stream, heartbeat: 0), endsWithJob: nil)
    }

    private func receiving(_ registry: SubscriberRegistry, _ job: String) -> [Int] {
        var keys: [Int] = []
        registry.forEachSolo(receiving: job) { keys.append($0.key) }
        return keys.sorted()
    }

    @Test func anEventOfAJobReachesOnlyTheStreamsThatMayWantIt() {
        let registry = SubscriberRegistry()
        registry.add(subscription(1, .jobs(["a"])))
        registry.add(subscription(2, .jobs(["a", "b"])))
        registry.add(subscription(3, .allJobs))
        registry.add(subscription(4, .owned(by: "k", jobs: nil)))
        registry.add(subscription(5, .owned(by: "k", jobs: ["b"])))
        #expect(receiving(registry, "a") == [1, 2, 3, 4])
        #expect(receiving(registry, "b") == [2, 3, 4, 5])
        #expect(receiving(registry, "c") == [3, 4])
        registry.remove(2)
        registry.remove(3)
        #expect(receiving(registry, "a") == [1, 4])
        #expect(receiving(registry, "b") == [4, 5])
    }

    /// A stream joining its group leaves the private ones; leaving it again, it is private once more.
    @Test func aStreamMovedIntoItsGroupIsNoLongerOfferedPrivately() {
        let registry = SubscriberRegistry()
        let stream = subscription(1, .allJobs)
        registry.add(stream)
        _ = registry.group(interval: 500, after: 0, windowBytes: 1 << 16)
        registry.move(stream, to: .shared(interval: 500, cursor: 0, lastID: 0))
        #expect(receiving(registry, "a").isEmpty && registry.soloAnyJob.isEmpty)
        registry.move(stream, to: .log(after: 0))
        #expect(receiving(registry, "a") == [1])
        registry.remove(1)
        #expect(receiving(registry, "a").isEmpty && registry.solo.isEmpty)
    }
}
