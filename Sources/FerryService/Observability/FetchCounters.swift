import Synchronization

/// Fetch-through's counters for `/metrics`: answers by result (`Ferry-Cache`'s value, or `refused` for a request
/// turned away before any job), and the body bytes answered from the cache and from origins (as the answers declare
/// them when made; an answer cut short still counts whole).
///
/// Owner: its `Mutex`, held for one update; written by `FetchController` from any task, read when `/metrics` renders.
final class FetchCounters: Sendable {
    /// The results counted, each shown (zero included).
    static let results = ["hit", "miss", "revalidated", "stale", "refused"]

    struct Counts: Equatable {
        var requests: [String: Int] = [:]
        var bytesFromCache: Int64 = 0
        var bytesFromOrigin: Int64 = 0
    }

    private let counts = Mutex(Counts())

    /// One answer: `result` as in `Ferry-Cache` (or `refused`), with the body bytes it declares.
    func answered(_ result: String, bytes: Int64, fromCache: Bool) {
        counts.withLock { counts in
            counts.requests[result, default: 0] += 1
            if fromCache { counts.bytesFromCache += bytes } else { counts.bytesFromOrigin += bytes }
        }
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// The counters in Prometheus' text format.
    func render() -> String {
        let counts = snapshot
        var out = "# HELP ferry_fetch_requests_total Fetch-through answers by result (Ferry-Cache), refused: turned away before any job.\n"
        out += "# TYPE ferry_fetch_requests_total counter\n"
        for result in Self.results {
            out += "ferry_fetch_requests_total{result=\"\(result)\"} \(counts.requests[result] ?? 0)\n"
        }
        out += "# HELP ferry_fetch_served_bytes_total Fetch-through body bytes answered, from the cache or streamed from origins.\n"
        out += "# TYPE ferry_fetch_served_bytes_total counter\n"
        out += "ferry_fetch_served_bytes_total{source=\"cache\"} \(counts.bytesFromCache)\n"
        out += "ferry_fetch_served_bytes_total{source=\"origin\"} \(counts.bytesFromOrigin)\n"
        return out
    }
}
