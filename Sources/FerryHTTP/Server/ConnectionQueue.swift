import Dispatch
import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// One of the few serial queues connections are spread over, with scratch state its connections share:
/// a read buffer and the cached `Date` header. Everything here is confined to `queue`.
final class ConnectionQueue: @unchecked Sendable {
    let queue: DispatchQueue
    let readBuffer: UnsafeMutableRawBufferPointer
    private var dateSecond = -1
    private var dateBytes: [UInt8] = []

    init(label: String, target: DispatchQueue) {
        queue = DispatchQueue(label: label, target: target)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// "Date: <IMF-fixdate>\r\n", formatted at most once per second.
    func dateHeaderLine() -> [UInt8] {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateBytes = Array("Date: ".utf8) + HTTPDate.formatBytes(secondsSince1970: now) + [13, 10]
        }
        return dateBytes
    }
}
