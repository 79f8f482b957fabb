/// One piece of a streamed body, framed for the wire once and shared by every stream it is sent to (an event
/// batch fanned out to thousands of subscribers): `<size in hex>\r\n<payload>\r\n` for a chunked body, the payload
/// alone otherwise.
///
/// Immutable once made, so any thread may read it; its bytes live in one allocation whose address never moves,
/// which lets ``ResponseStream/writeShared(_:)`` hand them to `writev` without copying.
public final class SharedChunk: @unchecked Sendable {
    /// `header + payload + "\r\n"`.
    private let storage: UnsafeMutableRawBufferPointer
    /// Bytes before the payload (the chunk-size line).
    public let headerCount: Int
    public let payloadCount: Int

    public init(_ payload: [UInt8]) {
        precondition(!payload.isEmpty, "an empty chunk would end a chunked body")
        let header = Array(String(payload.count, radix: 16).utf8) + [13, 10]
        headerCount = header.count
        payloadCount = payload.count
        storage = .allocate(byteCount: header.count + payload.count + 2, alignment: 1)
        storage.copyBytes(from: header)
        UnsafeMutableRawBufferPointer(rebasing: storage[header.count...]).copyBytes(from: payload)
        storage[header.count + payload.count] = 13
        storage[header.count + payload.count + 1] = 10
    }

    deinit { storage.deallocate() }

    /// The bytes that go on the wire for a chunked (`true`) or an unframed body.
    public func wire(chunked: Bool) -> UnsafeRawBufferPointer {
        chunked ? UnsafeRawBufferPointer(storage)
            : UnsafeRawBufferPointer(rebasing: storage[headerCount..<(headerCount + payloadCount)])
    }

    /// The payload, copied (for the buffered path, which frames bytes itself).
    public var payload: [UInt8] { Array(wire(chunked: false)) }

    /// The wire size for a chunked (`true`) or an unframed body.
    public func wireCount(chunked: Bool) -> Int { chunked ? storage.count : payloadCount }

    /// What is left to send of `chunks` (on the wire, in order) once the first `written` bytes went out: the tail of
    /// a write the socket took only in part, to be sent as it is before anything else.
    public static func remainder(of chunks: some Sequence<SharedChunk>, chunked: Bool, after written: Int) -> [UInt8] {
        var skip = written
        var rest: [UInt8] = []
        for chunk in chunks {
            let wire = chunk.wire(chunked: chunked)
            if skip >= wire.count {
                skip -= wire.count
                continue
            }
            rest.append(contentsOf: wire[skip...])
            skip = 0
        }
        return rest
    }
}
