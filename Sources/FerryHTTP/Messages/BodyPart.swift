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
