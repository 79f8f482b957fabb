import FerryCore
import FerryStore
import Foundation

/// What the supervisor of one node among several needs to know of the cluster: the shared store, its own id and
/// lease, and how to ask for more work. Nil on a single node (SQLite, or PostgreSQL used by one node the same way).
/// Made by `RunningService+Cluster`; used by `JobSupervisor+Cluster`.
struct NodeRole: Sendable {
    var store: any ClusterJobStore
    var node: String
    var lease: Duration
    /// Asks the node's `LeaseKeeper` to claim jobs now (a slot freed, a job became runnable).
    var wantsWork: @Sendable () -> Void
    /// How long an action forwarded to the owner of a job may take to become visible here.
    var forwardTimeout: Duration = .seconds(5)
    /// Whether the node's leases are renewed recently enough to act on its jobs (`LeaseTerm`); nil: always.
    var fence: LeaseFence? = nil
    /// The epochs this node took its jobs under, which its writes for them carry.
    var held = HeldEpochs()
    /// The parts records its claims read, for the jobs' first starts.
    var claimedUploads = ClaimedUploadRecords()
}

/// An action on a job owned by another node, as sent to that node (`ClusterJobStore.send(command:to:)`):
/// `<verb> <job id>`, and for a PATCH `patch <job id> <fields as JSON>` (the normalized URL, tags, priority, limit);
/// then a line with the node that asked, which the owner tells when it refuses the action (`ForwardedRefusal`).
/// Pure.
enum ForwardedAction: Sendable, Equatable {
    case pause, resume, cancel, delete
    case patch(JobPatch)

    var verb: String {
        switch self {
        case .pause: "pause"
        case .resume: "resume"
        case .cancel: "cancel"
        case .delete: "delete"
        case .patch: "patch"
        }
    }

    /// The command naming job `id` (a job id never holds a space), asked by node `asker` (a node id never holds a
    /// line break, nor does the JSON of a patch).
    func command(_ id: String, asker: String) -> String {
        guard case .patch(let patch) = self else { return "\(verb) \(id)\n\(asker)" }
        return "patch \(id) " + String(decoding: Self.encode(patch), as: UTF8.self) + "\n" + asker
    }

    /// Whether the job as read back (nil: deleted) shows this action done, so that the forwarding node may answer.
    /// A patched job that stopped running shows it done too: nobody runs it now, and the forwarding node applies the
    /// patch itself when the fields do not show it (`JobSupervisor.update`).
    func isVisible(in job: JobRecord?) -> Bool {
        guard let job else { return true }
        return switch self {
        case .pause: !job.state.needsRunning
        case .resume: job.state.needsRunning || job.state == .finished
        case .cancel: job.state == .cancelled || job.state == .finished
        case .delete: false
        case .patch(let patch): patch.isShown(in: job) || !job.state.needsRunning
        }
    }

    /// The action, job id and asking node of a command; nil for anything else.
    static func parse(_ command: String) -> (action: ForwardedAction, id: String, asker: String)? {
        let lines = command.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 2, !lines[1].isEmpty else { return nil }
        let parts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[1].isEmpty else { return nil }
        let action: ForwardedAction
        switch (parts[0], parts.count) {
        case ("pause", 2): action = .pause
        case ("resume", 2): action = .resume
        case ("cancel", 2): action = .cancel
        case ("delete", 2): action = .delete
        case ("patch", 3):
            guard let patch = decode(Array(parts[2].utf8)) else { return nil }
            action = .patch(patch)
        default: return nil
        }
        return (action, parts[1], String(lines[1]))
    }

    /// A patch's fields as one line of JSON: only those it changes (`maxBytesPerSecond: null` removes the limit).
    static func encode(_ patch: JobPatch) -> [UInt8] {
        var json = JSONWriter(capacity: 128)
        json.beginObject()
        if let priority = patch.priority { json.field("priority", priority) }
        if let rate = patch.maxBytesPerSecond { json.field("maxBytesPerSecond", rate) }
        if let url = patch.url { json.field("url", url.normalized) }
        if let tags = patch.tags {
            json.key("tags")
            json.beginArray()
            for tag in tags { json.string(tag) }
            json.endArray()
        }
        json.endObject()
        return json.bytes
    }

    /// The patch `encode` wrote; nil when the JSON is not one (or its URL no longer parses).
    static func decode(_ bytes: [UInt8]) -> JobPatch? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        var patch = JobPatch()
        if let value = object["priority"] {
            guard let priority = value as? Int else { return nil }
            patch.priority = priority
        }
        if let value = object["maxBytesPerSecond"] {
            if value is NSNull { patch.maxBytesPerSecond = .some(nil) } else {
                guard let rate = value as? Int64 else { return nil }
                patch.maxBytesPerSecond = .some(rate)
            }
        }
        if let value = object["url"] {
            guard let text = value as? String,
                  let url = try? SubmittedURL.parse(text, schemes: SubmittedURL.downloadSchemes) else { return nil }
            patch.url = url
        }
        if let value = object["tags"] {
            guard let tags = value as? [String] else { return nil }
            patch.tags = tags
        }
        return patch.isEmpty ? nil : patch
    }
}

/// The owner's answer to a forwarded action it could not make (its state changed meanwhile, the job is gone, its
/// store failed), sent back to the asking node so that it answers as the owner would rather than wait:
/// `refused <job id> <verb> <reason> <sentence>`, the reason `conflict`, `notFound` or `failed`. Pure.
struct ForwardedRefusal: Sendable, Equatable {
    var id: String
    /// The refused action's `ForwardedAction.verb`.
    var verb: String
    var error: JobsError

    init(id: String, verb: String, error: JobsError) {
        self.id = id
        self.verb = verb
        self.error = error
    }

    var command: String {
        let (reason, sentence): (String, String) = switch error {
        case .notApplicable(let why): ("conflict", why)
        case .notFound: ("notFound", error.description)
        case .storeFailed(let why): ("failed", why)
        default: ("failed", error.description)
        }
        return "refused \(id) \(verb) \(reason) " + sentence.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// The refusal a command carries; nil for anything else.
    static func parse(_ command: String) -> ForwardedRefusal? {
        let parts = command.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "refused", !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        let error: JobsError
        switch parts[3] {
        case "conflict": error = .notApplicable(parts[4])
        case "notFound": error = .notFound(id: parts[1])
        case "failed": error = .storeFailed(parts[4])
        default: return nil
        }
        return ForwardedRefusal(id: parts[1], verb: parts[2], error: error)
    }
}
