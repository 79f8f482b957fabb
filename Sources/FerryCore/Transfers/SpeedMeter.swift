/// Smoothed transfer speed and time remaining, from samples of (time, total bytes so far).
///
/// The speed is the average over a sliding window (default 5 s): bytes gained between the oldest sample
/// still covering the window and the newest, divided by the time between them. Bursty arrivals (a 1 MiB
/// chunk, then silence) therefore average out instead of jumping between zero and huge values, and a
/// stall shows as a falling speed as later samples arrive. Samples closer together than 1/32 of the window
/// are merged, so memory stays bounded however often ``record(totalBytes:at:)`` is called.
///
/// The speed is 0 until two samples at different times exist. A sample with fewer total bytes than the
/// previous one (the transfer restarted) or an earlier time starts the meter afresh. A value type owned
/// by whoever owns the transfer's state (the engine's queue).
public struct SpeedMeter: Sendable {
    private var samples: [(time: Double, bytes: Int64)] = []
    private let window: Double

    /// - Parameter window: seconds averaged over; values below 0.1 are raised to 0.1.
    public init(window: Double = 5) {
        self.window = max(window.isFinite ? window : 5, 0.1)
    }

    /// Adds a sample: `totalBytes` received so far at `time` (seconds on any monotonic clock).
    public mutating func record(totalBytes: Int64, at time: Double) {
        guard time.isFinite else { return }
        if let last = samples.last, totalBytes < last.bytes || time < last.time {
            samples.removeAll(keepingCapacity: true)
        }
        if samples.count >= 2, time - samples[samples.count - 2].time < window / 32 {
            samples[samples.count - 1] = (time, totalBytes)
        } else {
            samples.append((time, totalBytes))
        }
        // Keep exactly one sample at or before the window's start.
        while samples.count > 2, samples[1].time <= time - window { samples.removeFirst() }
    }

    /// Bytes per second over the window; 0 before two samples at different times.
    public var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    /// Seconds until `remaining` more bytes arrive at the current speed; `nil` when the remaining size is
    /// unknown or the speed is 0; 0 when nothing remains.
    public func eta(remaining: Int64?) -> Double? {
        guard let remaining else { return nil }
        if remaining <= 0 { return 0 }
        let speed = bytesPerSecond
        guard speed > 0 else { return nil }
        return Double(remaining) / speed
    }
}
