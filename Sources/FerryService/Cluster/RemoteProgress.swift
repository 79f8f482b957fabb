import Foundation

/// A `progress` event another node published for a job it runs (`ClusterChannel.progress`), as this node reads it
/// to update its table's view of that job (`JobSupervisor.absorbProgress`). Pure: parsed from the event's JSON
/// (`JobView.renderProgress`), whose bytes are published here unchanged.
struct RemoteProgress: Sendable, Equatable {
    enum Phase: String, Sendable { case downloading, delivering }

    var jobID: String
    var phase: Phase
    /// Downloading: bytes received and expected; delivering: bytes sent and to send.
    var bytes: Int64
    var total: Int64?
    var speed: Double
    var eta: Double?
    /// The event's JSON, as the owner rendered it.
    var data: [UInt8]

    /// The progress of one event's JSON; nil when it is not a progress event's.
    init?(json data: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any],
              let id = object["id"] as? String, !id.isEmpty,
              let phase = (object["phase"] as? String).flatMap(Phase.init(rawValue:)) else { return nil }
        let (bytesKey, totalKey) = phase == .downloading ? ("bytesReceived", "bytesExpected") : ("bytesSent", "bytesTotal")
        guard let bytes = (object[bytesKey] as? NSNumber)?.int64Value else { return nil }
        jobID = id
        self.phase = phase
        self.bytes = bytes
        total = (object[totalKey] as? NSNumber)?.int64Value
        speed = (object["speed"] as? NSNumber)?.doubleValue ?? 0
        eta = (object["eta"] as? NSNumber)?.doubleValue
        self.data = data
    }
}
