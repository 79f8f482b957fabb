/// What follows a response head.
public enum ResponseBody: Sendable {
    case empty
    case bytes([UInt8])
    /// A region of a file on disk, sent without loading it (sendfile).
    case file(FileBody)
    /// A concatenation of bytes and file regions (multipart/byteranges); the length is known.
    case parts([BodyPart])
    /// Bytes produced later through a `ResponseStream`; chunked when `length` is nil.
    case stream(length: Int64?, start: @Sendable (ResponseStream) -> Void)
    /// A `101 Switching Protocols` answer: the connection then carries another protocol (WebSocket). The closure is
    /// called on the connection's queue with the stream its own bytes go to (written as they are, no framing; its
    /// `finish` closes the connection), and returns what receives the client's bytes.
    case upgrade(@Sendable (ResponseStream) -> UpgradeReader)

    /// The body length when known in advance.
    public var knownLength: Int64? {
        switch self {
        case .empty: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let file): return file.length
        case .parts(let parts): return parts.reduce(0) { $0 + $1.length }
        case .stream(let length, _): return length
        case .upgrade: return nil
        }
    }
}

/// What receives a client's bytes on a connection that switched protocols (`ResponseBody.upgrade`): called on the
/// connection's queue, in order, until the connection closes (the stream's close handlers say when).
public typealias UpgradeReader = @Sendable ([UInt8]) -> Void
