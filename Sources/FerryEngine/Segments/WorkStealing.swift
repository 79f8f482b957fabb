/// Which range a free connection of a segmented download takes over, so that every connection stays busy to
/// the end.
///
/// Pure. The rule: a connection whose segment is finished takes over half of what remains of the slowest
/// segment, i.e. the one expected to finish last (remaining bytes ÷ its current speed; a segment not moving at
/// all — stalled, or waiting to retry — counts as slowest of all; ties go to the larger remainder, then the lower
/// offset). It takes the back half, since the victim's connection is busy receiving the front. Not worth a new
/// request, and so never taken over:
/// - a segment with less than `2 × minimumPiece` left (1 MiB halves by default);
/// - a segment expected to finish within `minimumSecondsLeft` (1 s) anyway: the bytes already in flight on its
///   connection (socket buffers, an origin's burst) would be fetched twice, and a new request pays a round trip
///   and a slow start;
/// - a segment whose speed is not measured yet (`bytesPerSecond == nil`, a fresh connection), for the same reason.
/// When nothing qualifies, the connection is released; the engine asks again on its next tick.
enum WorkStealing {
    /// A segment some connection is filling (or will, after a retry back-off).
    struct Candidate: Equatable, Sendable {
        /// The segment's name (its first byte).
        var start: Int64
        /// The next byte its connection will receive (bytes before it are received, if not yet written).
        var position: Int64
        /// One past its last byte.
        var end: Int64
        /// Its connection's current speed; 0 when not moving (or not connected), nil when not measured yet.
        var bytesPerSecond: Double?

        var remaining: Int64 { max(0, end - position) }

        /// Seconds until it finishes at its current speed; infinite when it is not moving, nil when unknown.
        var secondsLeft: Double? {
            guard let bytesPerSecond else { return nil }
            return bytesPerSecond > 0 ? Double(remaining) / bytesPerSecond : .infinity
        }
    }

    /// The segment to split and where: the victim keeps `[position, at)`, the thief gets `[at, end)`.
    struct Steal: Equatable, Sendable {
        var victim: Int64
        var at: Int64
    }

    static func steal(from candidates: [Candidate], minimumPiece: Int64, minimumSecondsLeft: Double = 1) -> Steal? {
        let piece = max(1, minimumPiece)
        let eligible = candidates.compactMap { candidate -> (Candidate, Double)? in
            guard candidate.remaining >= 2 * piece, let seconds = candidate.secondsLeft, seconds >= minimumSecondsLeft else { return nil }
            return (candidate, seconds)
        }
        let slowest = eligible.max { a, b in
            if a.1 != b.1 { return a.1 < b.1 }
            if a.0.remaining != b.0.remaining { return a.0.remaining < b.0.remaining }
            return a.0.start > b.0.start
        }
        guard let victim = slowest?.0 else { return nil }
        // The victim keeps the (rounded-up) front half.
        let keep = victim.remaining - victim.remaining / 2
        return Steal(victim: victim.start, at: victim.position + keep)
    }
}
