#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor that streams send regions of (``ResponseStream/writeFile(_:offset:length:)``), closed when the
/// last holder lets it go: the producer may reopen or stop while the connection still sends what it queued.
///
/// Immutable; any thread may hold it.
public final class StreamFile: Sendable {
    public let descriptor: Int32

    /// Takes ownership of `descriptor` (opened for reading).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// Bytes of a `StreamFile` queued on a stream, sent with sendfile(2).
struct StreamFileRegion {
    let file: StreamFile
    var offset: Int64
    var length: Int

    /// One sendfile(2) of up to 1 MiB of the region to `socket`, the region moved past what went. Returns
    /// sendfile's result (errno untouched after it).
    mutating func send(to socket: Int32) -> Int {
        var position = off_t(offset)
        let n = sendfile(socket, file.descriptor, &position, min(length, 1 << 20))
        if n > 0 {
            offset += Int64(n)
            length -= n
        }
        return n
    }
}
