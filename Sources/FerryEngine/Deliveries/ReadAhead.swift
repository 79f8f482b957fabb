/// How far ahead of a delivery's reads the kernel is asked to bring the file into the page cache
/// (`POSIX_FADV_WILLNEED`). A finished file was written with `O_DIRECT`, so it is not cached; without this, each
/// `pread` of libcurl's read callback, on the engine queue, waited for the disk (issue 26: a delivery at 0.66×
/// `curl -T`, and every transfer of the engine held up meanwhile).
///
/// Pure: it says which range to advise as the reads move on; `DownloadEngine+Deliveries` makes the call. Kept by
/// the `Upload` (engine queue), anew for each attempt.
struct ReadAhead: Sendable, Equatable {
    /// Bytes kept advised beyond the reads.
    let window: Int64
    /// The end of the ranges advised so far.
    private(set) var advisedTo: Int64 = 0

    init(window: Int64 = 16 << 20) {
        self.window = max(1, window)
    }

    /// The range to advise now that the reads reached `offset` of a file of `size` bytes, or nil: asked again once
    /// less than half a window is left advised ahead of the reads, up to a window ahead, never past the end.
    mutating func advice(at offset: Int64, size: Int64) -> Range<Int64>? {
        guard advisedTo < size, advisedTo - offset < window / 2 else { return nil }
        let start = max(advisedTo, offset)
        let end = min(size, offset + window)
        guard start < end else { return nil }
        advisedTo = end
        return start..<end
    }
}
