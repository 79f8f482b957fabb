/// Judges a paced transfer from its progress samples: what a speed limit promises over short windows. Used by the
/// engine's download rate tests and by the service's upload rate test (samples taken where the bytes arrive).
public enum RateCheck {
    /// Sentences for every window (from a sample at least `after` seconds past the first, to the first sample
    /// `window` seconds later) whose rate is off `limit` by more than `tolerance`, and for every stall (bytes not
    /// growing) longer than `maxStall` seconds. Empty when the limit held.
    public static func problems(_ samples: [(time: Double, bytes: Int64)], limit: Double, after: Double, window: Double,
                                tolerance: Double, maxStall: Double) -> [String] {
        guard let first = samples.first else { return ["no samples"] }
        var problems: [String] = []
        for (index, start) in samples.enumerated() where start.time - first.time >= after {
            guard let end = samples[(index + 1)...].first(where: { $0.time - start.time >= window }) else { break }
            let rate = Double(end.bytes - start.bytes) / (end.time - start.time)
            if abs(rate - limit) > limit * tolerance {
                problems.append(String(format: "%.0f B/s from %.2f s to %.2f s", rate, start.time - first.time, end.time - first.time))
            }
        }
        var lastGrowth = first
        for sample in samples.dropFirst() where sample.bytes > lastGrowth.bytes {
            if sample.time - lastGrowth.time > maxStall {
                problems.append(String(format: "stalled %.2f s at %.2f s", sample.time - lastGrowth.time, lastGrowth.time - first.time))
            }
            lastGrowth = sample
        }
        return problems
    }
}
