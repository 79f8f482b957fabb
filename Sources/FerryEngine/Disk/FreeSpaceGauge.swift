/// The spool's free space as last read (`statfs`), and whether that reading may still stand in for a new one.
///
/// Every transfer that starts, and every split that preallocates, asks whether the free space stays above the
/// reserve (`minFreeSpace`). Asking the file system each time cost a `statfs` per file of a batch of small files.
/// A reading younger than `maxAge` whose bytes, less what the caller is about to take, stay at least `margin`
/// above the reserve is used as is; one near the reserve, or older, is read again, so a disk close to full is
/// judged exactly as before. What the gauge trades is only the start-time guard: the ticker's `checkFreeSpace`
/// reads afresh each `diskCheckInterval` and stops running transfers under the reserve, and a write that meets a
/// full disk (ENOSPC) makes its transfer wait for space whatever any reading said.
///
/// A pure value, owned by the engine's queue.
struct FreeSpaceGauge: Sendable {
    /// How long a reading stands in for a new one.
    let maxAge: Double
    /// How far above the reserve (after what the caller takes) a reading must be to stand in for a new one.
    let margin: Int64
    private var reading: (bytes: Int64, at: Double)?

    init(maxAge: Double = 0.25, margin: Int64 = 256 << 20) {
        self.maxAge = maxAge
        self.margin = margin
    }

    /// The last reading, when it may stand in for a new one for a caller about to take `needed` bytes at `now`.
    func cached(now: Double, reserve: Int64, needed: Int64 = 0) -> Int64? {
        guard let reading, now >= reading.at, now - reading.at < maxAge else { return nil }
        let (left, overflow) = reading.bytes.subtractingReportingOverflow(max(0, needed))
        guard !overflow, left >= reserve, left - reserve >= margin else { return nil }
        return reading.bytes
    }

    /// Records a reading taken at `now` (nil: the file system did not answer, and nothing is cached).
    mutating func record(_ bytes: Int64?, at now: Double) {
        reading = bytes.map { ($0, now) }
    }
}
