/// What a partial file kept from an earlier run holds (`FileWriter.openPartial`'s answer), and the pure decision
/// of it from the file's size and its segment sidecar. A value, used on any queue.
enum PartialOnDisk: Equatable, Sendable {
    /// `bytes` contiguous bytes from offset 0 (hashed).
    case contiguous(bytes: Int64)
    /// A preallocated file with its segment state (the contiguous prefix hashed).
    case segmented(SegmentSidecar)
    /// Segment state that does not fit the file or the origin's validator: the file was emptied.
    case discarded(reason: String)

    /// The bytes it keeps (`FileWriter.open`'s answer).
    var bytesKept: Int64 {
        switch self {
        case .contiguous(let bytes): bytes
        case .segmented(let sidecar): sidecar.table.bytesWritten
        case .discarded: 0
        }
    }

    /// Judges a kept file of `size` bytes by its segment sidecar's text (nil: there is none). Without a sidecar the
    /// bytes are a contiguous prefix. A sidecar that fits — it decodes, its total is the file's size, its validator
    /// is `validator` (when given) and its total is `total` (when given) — makes the file a segmented download in
    /// progress; one that does not means the bytes cannot be trusted (`discarded`: the file is to be emptied).
    static func judge(sidecar text: String?, size: Int64, validator: String?, total: Int64?) -> PartialOnDisk {
        guard let text else { return .contiguous(bytes: size) }
        guard let sidecar = SegmentSidecar.decode(text) else {
            return .discarded(reason: "the saved segment state is unreadable")
        }
        guard sidecar.table.total == size, validator == nil || validator == sidecar.validator,
              total == nil || total == sidecar.table.total else {
            return .discarded(reason: "the saved segment state does not match the file")
        }
        return .segmented(sidecar)
    }
}
