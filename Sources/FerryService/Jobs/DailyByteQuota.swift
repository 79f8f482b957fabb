import FerryStore
import Foundation

/// The bytes each API key fetched in the last 24 hours, held against its `bytesPerDay` (API.md, "API keys"), and the
/// jobs of each key that wait for its window to free.
///
/// A rolling window of 96 buckets of 15 minutes a key: bytes leave the window at most 15 minutes after they are 24
/// hours old, so a key waits at most that much longer than an exact count would make it. Each node counts the
/// transfers it runs and writes what it counted to the store every few seconds (`takeUnwritten`); the windows of
/// limited keys are then read back (`load`: every node's counts, and those of the node's earlier runs).
///
/// Owner: `JobSupervisor`, a value on its actor; pure (the time is passed in), tested with a fake clock.
struct DailyByteQuota {
    static let bucketSeconds: Int64 = 900
    static let bucketCount = 96
    /// How often a node writes its counts and reads the others' (a key may pass its limit by what the nodes fetch
    /// in that time).
    static let syncInterval: Duration = .seconds(2)

    /// One key's counts: bucket number `n` (seconds since 1970 / `bucketSeconds`) is at `counts[n % bucketCount]`,
    /// for the `bucketCount` numbers up to `newest`.
    private struct Window {
        var counts = [Int64](repeating: 0, count: DailyByteQuota.bucketCount)
        var newest: Int64

        mutating func add(_ bytes: Int64, bucket: Int64) {
            if bucket > newest {
                let cleared = min(bucket - newest, Int64(DailyByteQuota.bucketCount))
                for step in 0..<cleared { counts[Int((bucket - step) % Int64(DailyByteQuota.bucketCount))] = 0 }
                newest = bucket
            }
            // A late sample (a clock step back) counts in the newest bucket rather than in one already gone.
            guard bucket > newest - Int64(DailyByteQuota.bucketCount) else { return }
            counts[Int(bucket % Int64(DailyByteQuota.bucketCount))] += bytes
        }

        /// The buckets still in the window at bucket `now`, oldest first.
        func live(at now: Int64) -> [(bucket: Int64, bytes: Int64)] {
            let first = max(now, newest) - Int64(DailyByteQuota.bucketCount) + 1
            guard first <= newest else { return [] }
            return (first...newest).map { ($0, counts[Int($0 % Int64(DailyByteQuota.bucketCount))]) }
        }
    }

    private var windows: [String: Window] = [:]
    /// Bytes counted here and not yet written to the store, by key, then bucket number.
    private var unwritten: [String: [Int64: Int64]] = [:]
    /// Buckets below this number were purged from the store (by this node).
    private var purgedBelow: Int64 = 0
    /// Jobs waiting for their key's window to free, by key.
    private(set) var parked: [String: Set<String>] = [:]
    /// When each key's next look at its window is due (one timer a key).
    private var wakes: [String: Date] = [:]

    static func bucket(at date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down)) / bucketSeconds
    }

    /// Counts bytes a transfer of `key`'s fetched.
    mutating func count(_ bytes: Int64, for key: String, at now: Date) {
        guard bytes > 0 else { return }
        let bucket = Self.bucket(at: now)
        windows[key, default: Window(newest: bucket)].add(bytes, bucket: bucket)
        unwritten[key, default: [:]][bucket, default: 0] += bytes
    }

    /// Takes what was counted here since the last call, for the store.
    mutating func takeUnwritten() -> [KeyUsage] {
        defer { unwritten = [:] }
        return unwritten.flatMap { key, buckets in buckets.map { KeyUsage(key: key, bucket: $0.key, bytes: $0.value) } }
    }

    /// Gives back counts the store did not take (they go with the next write; the windows hold them already).
    mutating func returnUnwritten(_ usage: [KeyUsage]) {
        for item in usage { unwritten[item.key, default: [:]][item.bucket, default: 0] += item.bytes }
    }

    /// Replaces the windows of `keys` with the store's counts (`stored`, every node's) plus what was counted here
    /// and is not written yet.
    mutating func load(_ stored: [KeyUsage], keys: [String], at now: Date) {
        let bucket = Self.bucket(at: now)
        var fresh = Dictionary(uniqueKeysWithValues: keys.map { ($0, Window(newest: bucket)) })
        for item in stored where fresh[item.key] != nil { fresh[item.key]!.add(item.bytes, bucket: item.bucket) }
        for key in keys {
            for (bucket, bytes) in unwritten[key] ?? [:] { fresh[key]!.add(bytes, bucket: bucket) }
        }
        windows.merge(fresh) { $1 }
    }

    /// Whether the store must be written to: something was counted, or buckets below `below` are still to purge.
    mutating func needsWrite(_ counted: [KeyUsage], purgingBelow below: Int64) -> Bool {
        guard counted.isEmpty, below <= purgedBelow else {
            purgedBelow = max(purgedBelow, below)
            return true
        }
        return false
    }

    /// The first bucket number of the window at `now` (older buckets may be purged from the store).
    static func firstBucket(at now: Date) -> Int64 {
        bucket(at: now) - Int64(bucketCount) + 1
    }

    /// Bytes `key`'s transfers fetched in the 24 hours up to `now`.
    func fetched(by key: String, at now: Date) -> Int64 {
        windows[key]?.live(at: Self.bucket(at: now)).reduce(0) { $0 + $1.bytes } ?? 0
    }

    /// Nil while `key` fetched less than `limit` in the window; else the time its window holds less than `limit`.
    func over(_ limit: Int64, key: String, at now: Date) -> Date? {
        guard let window = windows[key] else { return limit > 0 ? nil : .distantFuture }
        let live = window.live(at: Self.bucket(at: now))
        var total = live.reduce(0) { $0 + $1.bytes }
        guard total >= limit else { return nil }
        for (bucket, bytes) in live {
            total -= bytes
            // Bucket `b` leaves the window when bucket `b + bucketCount` begins.
            if total < limit {
                return Date(timeIntervalSince1970: TimeInterval((bucket + Int64(Self.bucketCount)) * Self.bucketSeconds))
            }
        }
        // A limit of 0: never under it.
        return .distantFuture
    }

    mutating func park(_ job: String, key: String) {
        parked[key, default: []].insert(job)
    }

    func isParked(_ job: String, key: String) -> Bool {
        parked[key]?.contains(job) ?? false
    }

    /// Takes `key`'s waiting jobs, to submit again.
    mutating func unpark(key: String) -> Set<String> {
        parked.removeValue(forKey: key) ?? []
    }

    /// A job that left its wait another way (paused, cancelled, deleted).
    mutating func forget(_ job: String, key: String) {
        parked[key]?.remove(job)
        if parked[key]?.isEmpty == true { parked[key] = nil }
    }

    /// Whether a look at `key`'s window at `date` must be scheduled: none is due by then already.
    mutating func needsWake(key: String, at date: Date) -> Bool {
        if let due = wakes[key], due <= date { return false }
        wakes[key] = date
        return true
    }

    /// The look scheduled for `key` happened.
    mutating func woke(key: String) {
        wakes[key] = nil
    }

    /// How many keys have a window here: at most the keys that exist (a revoked key's is forgotten).
    var keyCount: Int { windows.count }

    /// A revoked key's counts and waits.
    mutating func forget(key: String) {
        windows[key] = nil
        unwritten[key] = nil
        parked[key] = nil
        wakes[key] = nil
    }
}
