import FerryStore
import Foundation

/// With several nodes: the progress of jobs other nodes run (`ClusterChannel.progress`), kept in the table so that
/// `GET /api/v1/jobs/{id}` on this node shows fresh bytes and speed.
extension JobSupervisor {
    /// Puts other nodes' progress into the table and returns the events to publish on this node: those of jobs the
    /// table shows running elsewhere in the same phase (a progress that arrives after its job's last `job` event, or
    /// before this node knows the job, is dropped). The events' ids are placeholders (`ClusterEventFeed` numbers them).
    func absorbProgress(_ payload: [[UInt8]]) -> [ServerEvent] {
        guard role != nil else { return [] }
        var events: [ServerEvent] = []
        for data in payload {
            guard let progress = RemoteProgress(json: data), !owned.contains(progress.jobID),
                  var job = jobs[progress.jobID] else { continue }
            switch (progress.phase, job.state) {
            case (.downloading, .downloading):
                job.bytesReceived = progress.bytes
                job.bytesExpected = progress.total ?? job.bytesExpected
            case (.delivering, .delivering):
                guard var delivery = job.delivery else { continue }
                delivery.bytesSent = progress.bytes
                delivery.bytesTotal = progress.total ?? delivery.bytesTotal
                job.delivery = delivery
            default:
                continue
            }
            jobs[job.id] = job
            rates[job.id] = LiveRates(speed: progress.speed, eta: progress.eta)
            events.append(ServerEvent(id: ids.next(), kind: .progress, jobID: job.id, data: progress.data, owner: job.ownerKey))
        }
        return events
    }
}
