import FerryCore
import FerryStore
import Foundation

/// Where a fetch's job stands for its waiting client: the answer's head can be written once the origin responded.
///
/// `classify` is pure; `await` polls the supervisor's table (readable from any thread) until the job leaves the
/// states that say nothing yet (`await`).
enum FetchProgress: Equatable {
    /// Nothing known yet: queued, or connecting.
    case pending
    /// The origin answered and bytes are coming: stream them.
    case responded(JobRecord)
    /// The file is complete.
    case finished(JobRecord)
    /// The origin refused, or cannot be reached (`retrying` counts: a client is not kept waiting through back-offs).
    case failed(JobRecord, JobFailure)
    /// The job is no more (deleted by another client's fetch, or cancelled).
    case gone

    static func classify(_ job: JobRecord?) -> FetchProgress {
        guard let job else { return .gone }
        switch job.state {
        case .finished, .delivering:
            return .finished(job)
        case .failed:
            return .failed(job, job.error ?? JobFailure(code: .networkError, message: "the download failed"))
        case .cancelled:
            return .gone
        case .waiting where job.error?.code == .retrying:
            return .failed(job, job.error!)
        case .waiting, .paused:
            return .pending
        case .downloading:
            return job.finalURL == nil ? .pending : .responded(job)
        }
    }

    /// Polls `jobID` until it is past `.pending`, or `deadline` passes (then `.pending`): every millisecond for the
    /// first 100 ms (a loopback origin answers within a few; the first byte should not wait on the poll), then every
    /// 20 ms.
    static func await(_ jobID: String, in supervisor: JobSupervisor, deadline: Date) async -> FetchProgress {
        let started = Date()
        while true {
            let progress = classify(supervisor.table.entry(jobID)?.0)
            if progress != .pending || Date() >= deadline { return progress }
            let pause: UInt64 = Date().timeIntervalSince(started) < 0.1 ? 1 : 20
            try? await Task.sleep(nanoseconds: pause * 1_000_000)
        }
    }
}
