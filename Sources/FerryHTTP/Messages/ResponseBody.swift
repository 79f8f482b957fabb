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

/// A region of a file, opened when the response is sent. A failure to open before the head is sent answers 500;
/// later (or a file shorter than announced) aborts the connection.
public struct FileBody: Sendable, Equatable {
    public var path: String
    public var offset: Int64
    public var length: Int64

    public init(path: String, offset: Int64, length: Int64) {
        self.path = path
        self.offset = offset
        self.length = length
    }
}

/// One piece of a `.parts` body.
public enum BodyPart: Sendable, Equatable {
    case bytes([UInt8])
    case file(FileBody)

    public var length: Int64 {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let file): return file.length
        }
    }
}
