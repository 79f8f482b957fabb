/// When a `FileWriter` starts write-back of its file, and how far a `pageCacheOnly` writer waits for it (pure
/// bookkeeping; each writer holds one, confined to its queue, and makes the calls it returns).
///
/// Write-back of what went through the page cache is started every `startEvery` bytes written
/// (`sync_file_range`), so the disk works while the download runs and the `fsync` at the end has little left to
/// do. A `pageCacheOnly` writer also keeps its dirty bytes within `dirtyWindow` of its gapless prefix, waiting for
/// the write-back of what lies further behind. Otherwise a download faster than the disk would leave a backlog of
/// dirty pages as large as the file, flushed by its final `fsync` while every other commit on the file system (the
/// store's, with ext4's ordered data) waits behind it: on this 2-core VM, right after 16 clients of a 256 MiB miss
/// the next miss's first byte came 313, 96 and 8 ms after its request without the window, 9, 93 and 7 ms with it
/// (3–26 ms either way a few seconds later). Once a file outgrows the window the pace is the disk's, as it was
/// with direct writes; readers still read the page cache.
struct WriteBehind: Equatable {
    /// How many written bytes start write-back of the file.
    static let startEvery: Int64 = 16 << 20
    /// How far behind the gapless prefix a `pageCacheOnly` writer's dirty bytes may reach.
    static let dirtyWindow: Int64 = 64 << 20

    /// Bytes written since write-back was last started.
    private var sinceStart: Int64 = 0
    /// Bytes [0, settledUpTo) were written back (the dirty window's start).
    private(set) var settledUpTo: Int64 = 0

    /// Counts `count` bytes written; true when write-back of the file is to be started now.
    mutating func wrote(_ count: Int64) -> Bool {
        sinceStart += count
        guard sinceStart >= Self.startEvery else { return false }
        sinceStart = 0
        return true
    }

    /// The range whose write-back to wait for, with the gapless prefix at `prefix`, now counted as settled; nil when
    /// the dirty bytes are within the window.
    mutating func settle(prefix: Int64) -> (offset: Int64, length: Int64)? {
        let settled = prefix - Self.dirtyWindow
        guard settled > settledUpTo else { return nil }
        defer { settledUpTo = settled }
        return (settledUpTo, settled - settledUpTo)
    }

    /// The file was emptied or reopened: nothing of it is settled.
    mutating func restart() { settledUpTo = 0 }
}
