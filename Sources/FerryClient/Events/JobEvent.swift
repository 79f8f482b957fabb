import Foundation

/// A Ferry event, decoded: what the `event:` name and JSON `data:` of `/api/v1/events` mean.
public enum JobEvent: Sendable, Equatable {
    /// A whole job: on creation, state change, PATCH, restart (`restarted`) or resume.
    case job(Job, restarted: Bool)
    /// New numbers for a running job.
    case progress(ProgressUpdate)
    /// The job was deleted.
    case removed(id: String)
    /// The server cannot replay from the client's last event id: the client must list again.
    case reset
    /// An event name this client does not know (a newer server); ignored.
    case other(String)

    /// Decodes one stream event.
    /// - Throws: `ClientError.failed` when a known event carries data that does not decode.
    public init(_ event: ServerSentEvent) throws(ClientError) {
        let data = Data(event.data.utf8)
        do {
            switch event.event {
            case "job":
                let restarted = try JSONDecoder().decode(Restarted.self, from: data).restarted ?? false
                self = .job(try JSONDecoder().decode(Job.self, from: data), restarted: restarted)
            case "progress":
                self = .progress(try JSONDecoder().decode(ProgressUpdate.self, from: data))
            case "removed":
                self = .removed(id: try JSONDecoder().decode(Removed.self, from: data).id)
            case "reset":
                self = .reset
            default:
                self = .other(event.event)
            }
        } catch {
            throw .failed("malformed '\(event.event)' event from Ferry: \(event.data.prefix(200))")
        }
    }

    /// The job the event is about (nil for `reset` and unknown events).
    public var jobID: String? {
        switch self {
        case .job(let job, _): job.id
        case .progress(let update): update.id
        case .removed(let id): id
        case .reset, .other: nil
        }
    }

    private struct Restarted: Decodable { var restarted: Bool? }
    private struct Removed: Decodable { var id: String }
}
