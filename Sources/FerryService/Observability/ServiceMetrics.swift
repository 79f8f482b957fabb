import FerryEngine
import FerryCore
import Foundation

/// Counters for `/metrics`, updated from any thread.
///
/// Owner: its lock, held only for a dictionary update; gauges that belong to other owners (jobs
/// by state, speed, spool bytes, subscribers) are read from them when the page is rendered.
final class ServiceMetrics: @unchecked Sendable {
    struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    /// Fetch-through's answers and bytes (its own lock).
    let fetch = FetchCounters()
    private let lock = NSLock()
    private var requests: [RequestKey: Int] = [:]
    private var transferErrors: [String: Int] = [:]
    private var downloadedBytes: Int64 = 0
    private var created: Int = 0
    /// Webhook notice tries by result: every result listed, zero included.
    private var notices: [WebhookResult: Int] = [:]
    private var claims = 0
    private var handovers = 0
    private var fencedWrites = 0

    func request(route: String, method: String, status: Int) {
        lock.lock(); defer { lock.unlock() }
        requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
    }

    func transferError(_ code: FailureCode) {
        lock.lock(); defer { lock.unlock() }
        transferErrors[code.rawValue, default: 0] += 1
    }

    func bytesDownloaded(_ count: Int64) {
        lock.lock(); defer { lock.unlock() }
        downloadedBytes += count
    }

    func jobsCreated(_ count: Int) {
        lock.lock(); defer { lock.unlock() }
        created += count
    }

    /// Jobs this node claimed (several nodes).
    func claimed(_ count: Int) {
        lock.lock(); defer { lock.unlock() }
        claims += count
    }

    /// A claimed job whose former owner's lease had run out (several nodes).
    func handover() {
        lock.lock(); defer { lock.unlock() }
        handovers += 1
    }

    /// Writes this node did not make, or the store refused, for jobs whose lease it no longer held (several nodes):
    /// a commit of a job, a delivery request, an object part or completion, a notice.
    func fencedWrites(_ count: Int) {
        lock.lock(); defer { lock.unlock() }
        fencedWrites += count
    }

    func webhookNotice(_ result: WebhookResult) {
        lock.lock(); defer { lock.unlock() }
        notices[result, default: 0] += 1
    }

    /// Gauges owned elsewhere, gathered by the caller just before rendering.
    struct Gauges {
        var jobsByState: [String: Int]
        var downloadSpeed: Double
        var subscribers: Int
        var spoolBytes: Int64
        var freeBytes: Int64?
        var openConnections: Int
        /// The object store's requests and errors; nil without one (`--object-store`).
        var objectStore: ObjectStoreClient.Counts? = nil
        /// With several nodes: this node's id and the jobs it holds leases on; nil on a single node.
        var node: (id: String, leases: Int)? = nil
        /// The allocator's figures (`FreeMemory.figures()`); nil: not shown.
        var heap: FreeMemory.Figures? = nil
        /// `job`/`removed` events kept for replay (the hub's `EventLog`), and its bound; nil: not shown.
        var eventWindow: (count: Int, capacity: Int)? = nil
        /// Private event streams reading the log from their position (behind their socket or resuming), and the
        /// events held in private streams' queues and outboxes (`EventHub.privateFigures`); nil: not shown.
        var privateStreams: (readingLog: Int, heldEvents: Int)? = nil
    }

    /// Prometheus text exposition format, version 0.0.4.
    func render(_ gauges: Gauges) -> String {
        lock.lock()
        let requests = self.requests, errors = transferErrors, downloaded = downloadedBytes, created = self.created
        let notices = self.notices, claims = self.claims, handovers = self.handovers, fencedWrites = self.fencedWrites
        lock.unlock()
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        /// A family of one sample without labels.
        func sample(_ name: String, _ type: String, _ help: String, _ value: some CustomStringConvertible) {
            family(name, type, help)
            out += "\(name) \(value)\n"
        }
        family("ferry_jobs", "gauge", "Jobs by state.")
        for state in ["waiting", "downloading", "paused", "finished", "failed", "cancelled"] {
            out += "ferry_jobs{state=\"\(state)\"} \(gauges.jobsByState[state] ?? 0)\n"
        }
        sample("ferry_jobs_created_total", "counter", "Jobs created since start.", created)
        sample("ferry_downloaded_bytes_total", "counter", "Bytes received from origins since start.", downloaded)
        sample("ferry_download_speed_bytes_per_second", "gauge", "Current total download speed (smoothed).", Int64(gauges.downloadSpeed.rounded()))
        family("ferry_http_requests_total", "counter", "HTTP requests by route, method and status.")
        for (key, count) in requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            out += "ferry_http_requests_total{route=\"\(escape(key.route))\",method=\"\(key.method)\",status=\"\(key.status)\"} \(count)\n"
        }
        sample("ferry_sse_subscribers", "gauge", "Open event streams.", gauges.subscribers)
        sample("ferry_http_open_connections", "gauge", "Open HTTP connections.", gauges.openConnections)
        sample("ferry_spool_bytes", "gauge", "Bytes held in the spool (partial and finished files).", gauges.spoolBytes)
        sample("ferry_spool_free_bytes", "gauge", "Free bytes on the spool's filesystem.", gauges.freeBytes ?? -1)
        family("ferry_transfer_errors_total", "counter", "Transfer failures and waits by code.")
        for (code, count) in errors.sorted(by: { $0.key < $1.key }) {
            out += "ferry_transfer_errors_total{code=\"\(escape(code))\"} \(count)\n"
        }
        family("ferry_webhook_notices_total", "counter", "Webhook notice tries by result: delivered (2xx), retried, failed (given up), gone (410).")
        for result in WebhookResult.allCases {
            out += "ferry_webhook_notices_total{result=\"\(result.rawValue)\"} \(notices[result] ?? 0)\n"
        }
        if let heap = gauges.heap {
            family("ferry_heap_bytes", "gauge", "The allocator's bytes: in_use (live allocations), free (held by its arenas, not returned), mapped (large allocations, part of in_use).")
            out += "ferry_heap_bytes{kind=\"in_use\"} \(heap.inUse)\nferry_heap_bytes{kind=\"free\"} \(heap.free)\n"
            out += "ferry_heap_bytes{kind=\"mapped\"} \(heap.mapped)\n"
        }
        if let window = gauges.eventWindow {
            sample("ferry_event_window_events", "gauge", "job and removed events kept for Last-Event-ID replay.", window.count)
            sample("ferry_event_window_capacity", "gauge", "The most job and removed events kept for replay.", window.capacity)
        }
        if let streams = gauges.privateStreams {
            sample("ferry_event_streams_reading_log", "gauge", "Event streams that fell behind (or resume) and read the replay log from their position.", streams.readingLog)
            sample("ferry_event_held_events", "gauge", "Events held for private event streams beyond the replay log (their queues and the page being sent).", streams.heldEvents)
        }
        if let objectStore = gauges.objectStore {
            family("ferry_object_store_requests_total", "counter", "Object-store requests that ended, by S3 operation.")
            for (operation, count) in objectStore.requests.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                out += "ferry_object_store_requests_total{operation=\"\(operation.rawValue)\"} \(count)\n"
            }
            family("ferry_object_store_errors_total", "counter", "Object-store requests that failed, by kind.")
            for (kind, count) in objectStore.errors.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                out += "ferry_object_store_errors_total{kind=\"\(kind.rawValue)\"} \(count)\n"
            }
        }
        if let node = gauges.node {
            family("ferry_node_info", "gauge", "This node's id among the nodes sharing the store.")
            out += "ferry_node_info{node=\"\(escape(node.id))\"} 1\n"
            sample("ferry_node_leases", "gauge", "Jobs this node holds a lease on (runs).", node.leases)
            sample("ferry_node_claims_total", "counter", "Jobs this node claimed since start.", claims)
            sample("ferry_handovers_total", "counter", "Claimed jobs whose former owner's lease had run out.", handovers)
            sample("ferry_fenced_writes_total", "counter", "Writes not made, or refused by the store, for jobs this node no longer held.", fencedWrites)
        }
        out += fetch.render()
        return out
    }

    private func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
