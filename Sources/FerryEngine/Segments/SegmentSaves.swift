/// When a split run's segment table is saved next (pure; each `SegmentedDownload` holds one, on the engine queue):
/// at most every `interval` while the run goes on, only when the bytes written changed since the last save, never
/// two at once; after a failed save the next chance saves whatever the count.
struct SegmentSaves: Equatable {
    /// The written byte count of the last saved (or saving) table; -1 forces the next save.
    private(set) var savedBytes: Int64 = -1
    /// When that save began (monotonic seconds).
    private(set) var lastSave: Double = 0
    private(set) var saving = false

    /// The table as it is counts as saved at `now` (a run begins, or a split prepared its sidecar).
    init(savedBytes: Int64 = -1, at now: Double = 0) {
        self.savedBytes = savedBytes
        lastSave = now
    }

    /// Whether a save of a table with `bytesWritten` is due at `now`; when it is, it counts as begun.
    mutating func begin(bytesWritten: Int64, now: Double, interval: Double) -> Bool {
        guard !saving, bytesWritten != savedBytes, now - lastSave >= interval else { return false }
        saving = true
        lastSave = now
        savedBytes = bytesWritten
        return true
    }

    /// The save begun last ended; a failed one leaves the table to be saved at the next chance.
    mutating func ended(failed: Bool) {
        saving = false
        if failed { savedBytes = -1 }
    }
}
