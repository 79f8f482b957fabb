/// The bytes of one `FileWriter` write: a staged run (`RunBuffer`, reused once written and hashed) or an array.
/// Sent from the writer's queue to its digest queue, it keeps the bytes alive until they were hashed.
enum WritePayload: Sendable {
    case run(RunBuffer)
    case array([UInt8])

    var count: Int {
        switch self {
        case .run(let buffer): buffer.count
        case .array(let bytes): bytes.count
        }
    }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .run(let buffer): body(buffer.bytes)
        case .array(let bytes): bytes.withUnsafeBytes(body)
        }
    }
}
