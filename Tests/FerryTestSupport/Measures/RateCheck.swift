/// Judges a paced transfer from its progress samples: what a speed limit promises over short windows. Used by the
/// engine's download rate tests and by the service's upload rate test (samples taken where the bytes arrive).
public enum RateCheck {
    /// Sentences for every window (from a sample at least `after` seconds past the first, to the first sample
    /// `window` seconds later) whose rate is off `limit` by more than `tolerance`, and for every stall (bytes not
    /// growing) longer than `maxStall` seconds. Empty when the limit held.
    ///
    /// `frozen`: spans (in the samples' times) in which the process's threads, ready to run, did not get to (from
    /// `freezes(of:longerThan:)` or a `SchedulingProbe`). The limit's upper side is judged in every window as it is.
    /// Its lower side is asked of the time the process could run: a window's frozen time beyond `makeUp` (what the
    /// limiter makes up for late wake-ups) is taken out of its length, since no limiter reaches its rate in a process
    /// that did not run (on a busy machine a test process can wait a quarter of a second in two). A window frozen for
    /// more than half its length is not judged on the lower side; when fewer than a quarter of the windows are left
    /// to judge, that is a problem itself, so the check can always fail.
    public static func problems(_ samples: [(time: Double, bytes: Int64)], limit: Double, after: Double, window: Double,
                                tolerance: Double, maxStall: Double,
                                frozen: [ClosedRange<Double>] = [], makeUp: Double = 0.1) -> [String] {
        guard let first = samples.first else { return ["no samples"] }
        var problems: [String] = []
        var windows = 0, judged = 0
        for (index, start) in samples.enumerated() where start.time - first.time >= after {
            guard let end = samples[(index + 1)...].first(where: { $0.time - start.time >= window }) else { break }
            windows += 1
            let rate = Double(end.bytes - start.bytes) / (end.time - start.time)
            let span = String(format: "%.0f B/s from %.2f s to %.2f s", rate, start.time - first.time, end.time - first.time)
            if rate > limit * (1 + tolerance) { problems.append(span) }
            let length = end.time - start.time
            let excused = max(0, overlap(frozen, start.time...end.time) - makeUp)
            guard excused <= length / 2 else { continue }
            judged += 1
            if rate < limit * (1 - tolerance) * (length - excused) / length {
                problems.append(span + String(format: " (%.2f s of it frozen beyond the make-up)", excused))
            }
        }
        if judged * 4 < windows {
            problems.append("only \(judged) of \(windows) windows could be judged: the process waited to run for "
                + frozen.map { String(format: "%.2f s at %.2f s", $0.upperBound - $0.lowerBound, $0.lowerBound - first.time) }
                    .joined(separator: ", "))
        }
        var lastGrowth = first
        for sample in samples.dropFirst() where sample.bytes > lastGrowth.bytes {
            let stall = sample.time - lastGrowth.time
            if stall - overlap(frozen, lastGrowth.time...sample.time) > maxStall {
                problems.append(String(format: "stalled %.2f s at %.2f s", sample.time - lastGrowth.time, lastGrowth.time - first.time))
            }
            lastGrowth = sample
        }
        return problems
    }

    /// When the process's threads waited to run, as the rate tests judge it: none of `series` (progress samples 0.1 s
    /// apart) got a sample for 0.3 s, or the probe's timer fired more than 20 ms late.
    public static func frozen(_ series: [[(time: Double, bytes: Int64)]], probe: SchedulingProbe) -> [ClosedRange<Double>] {
        freezes(of: series, longerThan: 0.3) + probe.lateSpans(longerThan: 0.02)
    }

    /// Seconds of `window` that `spans` cover (spans that overlap each other count once for each).
    static func overlap(_ spans: [ClosedRange<Double>], _ window: ClosedRange<Double>) -> Double {
        spans.reduce(0) { sum, span in
            sum + max(0, min(span.upperBound, window.upperBound) - max(span.lowerBound, window.lowerBound))
        }
    }

    /// The spans in which none of `series` (each one transfer's samples, as they arrived) got a sample for more than
    /// `longerThan` seconds: the process (its engine queue, its sampler) did not run. Several transfers sampled on one
    /// queue all show such a gap at once; a slow transfer alone still gets its samples, so its gaps are not freezes.
    public static func freezes(of series: [[(time: Double, bytes: Int64)]], longerThan: Double) -> [ClosedRange<Double>] {
        let times = series.flatMap { $0.map(\.time) }.sorted()
        return zip(times, times.dropFirst()).compactMap { $1 - $0 > longerThan ? $0...$1 : nil }
    }
}
