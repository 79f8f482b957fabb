/// How many connections a download that did not ask for a number should use: it starts on one and adds more only
/// while they raise the total (issue 14: on a fast path a split costs more than it gives — the other segments'
/// bytes are read back to be hashed in order — and helps only where one connection is slow, e.g. an origin that
/// caps each connection).
///
/// Pure; the engine feeds it its ticks (monotonic seconds and the run's bytes received so far) and applies the
/// targets it returns (`DownloadEngine+Fetches`: the first raise splits the file, later ones let free connections
/// take over half of the slowest segment). The rules:
/// - Each level (1, 2, 4, … connections) is measured for `settle` seconds from when it was reached: the rate is
///   the bytes received in that window over its length.
/// - On one connection: at least `fastEnough` bytes per second, or too little left to split, ends the ramp (one
///   connection it stays); otherwise two.
/// - On more: the next level (doubling, at most `wanted`) only when this level's rate is at least `minimumGain` times
///   the previous level's. A level that misses is measured once more for `settle` seconds (its first window holds
///   its new connections' start, and on a busy machine time the process did not run); missing again ends the ramp
///   where it is (the connections already made finish their ranges).
/// - Too little left (less than a `minimumPiece` for each connection of the next level, twice over) ends it too.
struct AdaptiveSplit: Equatable, Sendable {
    struct Tuning: Equatable, Sendable {
        /// Seconds each level is measured before the next decision.
        var settle: Double = 1
        /// A single connection at least this fast is left alone (bytes per second).
        var fastEnough: Double = 64 * 1024 * 1024
        /// A level must beat the previous one by this factor for the ramp to go on.
        var minimumGain: Double = 1.25
    }

    /// The most connections the ramp may reach.
    let wanted: Int
    let tuning: Tuning
    /// The connections the ramp has asked for so far.
    private(set) var level = 1
    /// Set once the ramp will not raise the level again.
    private(set) var isFinished = false
    private var levelSince: Double
    private var bytesAtLevelStart: Int64
    private var previousRate: Double?
    /// This level missed its gain in one window and is being measured again.
    private var secondWindow = false

    init(wanted: Int, tuning: Tuning = Tuning(), now: Double, bytesReceived: Int64) {
        self.wanted = max(1, wanted)
        self.tuning = tuning
        self.levelSince = now
        self.bytesAtLevelStart = bytesReceived
        self.isFinished = self.wanted <= 1
    }

    /// The new number of connections to aim for, or nil to leave it as it is.
    /// - Parameters:
    ///   - remaining: bytes of the file not received yet.
    ///   - minimumPiece: the smallest range worth a connection of its own.
    mutating func decide(now: Double, bytesReceived: Int64, remaining: Int64, minimumPiece: Int64) -> Int? {
        guard !isFinished else { return nil }
        let elapsed = now - levelSince
        guard elapsed >= tuning.settle else { return nil }
        let rate = Double(max(0, bytesReceived - bytesAtLevelStart)) / elapsed
        let next = min(wanted, level * 2)
        if remaining < 2 * Int64(next) * max(1, minimumPiece) {
            isFinished = true
            return nil
        }
        if level == 1 {
            if rate >= tuning.fastEnough {
                isFinished = true
                return nil
            }
        } else if let previousRate, rate < previousRate * tuning.minimumGain {
            guard !secondWindow else {
                isFinished = true
                return nil
            }
            secondWindow = true
            levelSince = now
            bytesAtLevelStart = bytesReceived
            return nil
        }
        secondWindow = false
        previousRate = rate
        level = next
        levelSince = now
        bytesAtLevelStart = bytesReceived
        if level >= wanted { isFinished = true }
        return level
    }
}
