/// One Server-Sent Event as the stream delivered it.
public struct ServerSentEvent: Sendable, Equatable {
    /// The `id:` field of this event, nil when it had none (Ferry's `reset` has none).
    public var id: String?
    /// The `event:` field; "message" when absent, as the standard says.
    public var event: String
    /// The `data:` lines joined with "\n".
    public var data: String

    public init(id: String? = nil, event: String = "message", data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}
