/// A `FileWriter`'s segment sidecar (`partial/<id>.segments`, see `SegmentSidecar`) and whether the file is a split
/// download: it writes, reads and removes the sidecar, in the order the writer calls it among the writes and
/// truncations of the same file (see `FileWriter`). Held by the writer and confined to its queue.
struct SegmentStateFile {
    /// Where the sidecar lives; nil when the writer never handles segmented downloads (tests).
    let path: String?
    /// The sidecar was removed here and none written since (only the writer writes one): it is not there.
    private var removed = false
    /// The file is a split download (it has a sidecar): written through the page cache only, since its bytes past
    /// the hashed prefix are read back to hash them (`FileOrderDigest.catchUp`), which a direct write would send
    /// to disk.
    var split = false

    init(path: String?) { self.path = path }

    /// The sidecar's text, if there is one.
    func read() -> String? { path.flatMap(AtomicFile.read) }

    /// Stores `sidecar`; the file is split from now on.
    mutating func save(_ sidecar: SegmentSidecar) throws(SystemError) {
        guard let path else { return }
        removed = false
        split = true
        try AtomicFile.write(path, sidecar.encoded())
    }

    /// Removes the sidecar (the file was just emptied): the file is not split.
    mutating func remove() {
        if let path {
            AtomicFile.remove(path)
            removed = true
        }
        split = false
    }

    /// Removes the sidecar of a complete and synced file, unless it is known absent.
    func removeOnCompletion() {
        if let path, !removed { AtomicFile.remove(path) }
    }
}
