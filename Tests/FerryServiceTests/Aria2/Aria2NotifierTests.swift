import Logging
import Testing
@testable import FerryService

/// The aria2 notifier keeps one last state per job, whatever the number of its events, and forgets it with the job's
/// `removed` event (docs/ARCHITECTURE.md's bounds table; issue 32).
@Suite struct Aria2NotifierTests {
    static func job(_ id: Int64, _ jobID: String, _ state: String) -> ServerEvent {
        ServerEvent(id: id, kind: .job, jobID: jobID, data: Array(#"{"id":"\#(jobID)","state":"\#(state)"}"#.utf8))
    }

    @Test func keepsOneStatePerJobAndForgetsRemovedJobs() {
        let ids = EventIDAllocator(startingAfter: 0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), heartbeat: 0)
        let notifier = Aria2Notifier(hub: hub, owner: { _ in nil })
        let jobs = (0..<1_000).map { "job\($0)" }
        for state in ["waiting", "downloading", "paused", "downloading", "finished"] {
            hub.publish(jobs.map { Self.job(ids.next(), $0, state) })
        }
        hub.publish(jobs.map { EventFixture.progress(ids.next(), $0, bytes: 1) })
        hub.queue.sync {}
        #expect(notifier.jobCount == 1_000, "5,000 job events of 1,000 jobs: one state each")
        hub.publish(jobs.prefix(600).map { EventFixture.removed(ids.next(), $0) })
        hub.queue.sync {}
        #expect(notifier.jobCount == 400)
        hub.publish(jobs.suffix(400).map { EventFixture.removed(ids.next(), $0) })
        hub.queue.sync {}
        #expect(notifier.jobCount == 0, "every removed job forgotten")
        hub.closeAll()
    }
}
