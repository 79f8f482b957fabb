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

    /// The body length when known in advance.
    public var knownLength: Int64? {
        switch self {
        case .empty: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let file): return file.length
        case .parts(let parts): return parts.reduce(0) { $0 + $1.length }
        case .stream(let length, _): return length
        }
    }
}
