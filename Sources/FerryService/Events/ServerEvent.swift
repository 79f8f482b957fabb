import Foundation

/// One Server-Sent Event, with its wire form computed once and shared by every subscriber.
///
/// Immutable and `Sendable`: create it wherever the event happens (after its id is allocated by
/// ``EventIDAllocator``), then hand it to the events queue, which appends it to the ``EventLog`` and
/// offers it to each ``SubscriberQueue``. `frame` is an `[UInt8]`, so every subscriber shares the same
/// storage; nothing is re-encoded per connection. Only the frame is stored (`data` is read back out of
/// it), so an event kept in the replay window costs one allocation of its wire size.
///
/// Invariants (checked with `precondition`, they are programmer errors):
/// - `data` is one line of JSON: no CR or LF bytes. A line break would end the `data:` field early and
///   let the rest of the payload be read as further SSE fields by every client.
/// - `job`, `progress` and `removed` events name their job (`jobID != nil`): progress is coalesced per job
///   and filters select jobs.
/// - A `reset` is never logged nor queued: it is written once, in place of a replay, and its frame has
///   no `id:` line. The client's `Last-Event-ID` therefore stays at the id the server refused, so a
///   reconnection before any newer event arrives is refused again, and the client re-lists again, which
///   is the safe outcome.
public struct ServerEvent: Sendable, Equatable, CustomStringConvertible {
    /// The SSE event name (`event:` field), as API.md names them.
    public enum Kind: String, Sendable, CaseIterable {
        /// A whole job object: on creation, state change, PATCH, restart or resume.
        case job
        /// `{"id","bytesReceived","bytesExpected","progress","speed","eta"}`; may be coalesced.
        case progress
        /// `{"id"}` after DELETE.
        case removed
        /// The client's `Last-Event-ID` cannot be replayed; it must re-list.
        case reset
    }

    /// The event id: unique and increasing across the whole server (and across restarts). `0` for `reset`.
    public let id: Int64
    public let kind: Kind
    /// The job the event is about; `nil` only for `reset`.
    public let jobID: String?
    /// The one-line JSON payload, already encoded by the caller (a copy out of `frame`).
    public var data: [UInt8] { Array(dataBytes) }
    /// The payload within `frame`, without copying.
    public var dataBytes: ArraySlice<UInt8> { frame[Int(dataStart)..<(frame.count - 2)] }
    /// The bytes written to every subscriber: `id: N\nevent: NAME\ndata: JSON\n\n` (`reset`: no `id:` line).
    public let frame: [UInt8]
    /// Where `data` starts in `frame`.
    private let dataStart: UInt16
    /// True for the `job` event of a job reaching `finished` or `cancelled`, and for `removed`: a
    /// per-job stream ends after delivering it.
    public let closesJobStream: Bool
    /// The id of the API key owning the job (`EventFilter.owned` admits only its own); nil for the administrator's.
    public let owner: String?

    /// Creates an event and encodes its frame.
    /// - Parameters:
    ///   - id: from ``EventIDAllocator/next()``; ignored (stored as 0) for `.reset`.
    ///   - kind: the event name.
    ///   - jobID: required for every kind but `.reset`.
    ///   - data: one line of JSON (no CR or LF).
    public init(id: Int64, kind: Kind, jobID: String?, data: [UInt8], closesJobStream: Bool = false, owner: String? = nil) {
        precondition(!data.contains(0x0A) && !data.contains(0x0D), "SSE data must be a single line")
        precondition(kind == .reset || jobID != nil, "a \(kind.rawValue) event must name its job")
        self.id = kind == .reset ? 0 : id
        self.kind = kind
        self.jobID = jobID
        self.closesJobStream = closesJobStream
        self.owner = owner
        var frame: [UInt8] = []
        frame.reserveCapacity(data.count + 48)
        if kind != .reset {
            frame += "id: \(id)\n".utf8
        }
        frame += "event: \(kind.rawValue)\ndata: ".utf8
        self.dataStart = UInt16(frame.count)
        frame += data
        frame += [0x0A, 0x0A]
        self.frame = frame
    }

    /// The `reset` event, written instead of a replay. `data` defaults to `{}`.
    public static func reset(data: [UInt8] = Array("{}".utf8)) -> ServerEvent {
        ServerEvent(id: 0, kind: .reset, jobID: nil, data: data)
    }

    /// Whether this event is one every subscriber must receive (`job` or `removed`), as opposed to a
    /// coalescible `progress` (or the never-queued `reset`).
    public var isMandatory: Bool { kind == .job || kind == .removed }

    public var description: String { "\(kind.rawValue)#\(id)(\(jobID ?? "-"))" }

    public static func == (lhs: ServerEvent, rhs: ServerEvent) -> Bool {
        lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.jobID == rhs.jobID && lhs.dataBytes == rhs.dataBytes
    }
}
