import CCurl
import Dispatch
import FerryCore
import Foundation

/// Sends small one-shot requests (webhook notices) with libcurl's multi-socket interface on a queue of its own.
///
/// Owner: `queue`, where every libcurl call of its own `CurlMulti` happens (checked with `dispatchPrecondition`).
/// Separate from the download engine's multi so that notices never wait behind downloads' slots or speed limits.
/// Every request gets the engine's safety options: only http and https, no proxy from the environment, connect
/// and total timeouts, redirects not followed, and the destination guard (`AddressPolicy`) applied to every
/// address actually connected — or, through `Limits.proxy`, to the destination Ferry resolved and pinned
/// (`DestinationResolver`), which the proxy is told to connect to.
public final class RequestRunner: @unchecked Sendable {
    /// What every request is allowed and how long it may take.
    public struct Limits: Sendable {
        public var destinations: AddressPolicy
        /// Seconds to wait for a TCP/TLS connection.
        public var connectTimeout: Double = 10
        /// Seconds the whole exchange may take.
        public var totalTimeout: Double = 30
        public var userAgent: String = "Ferry/0.1"
        /// The proxy requests go through (`--proxy`); nil connects directly.
        public var proxy: ProxySetting?

        public init(destinations: AddressPolicy, proxy: ProxySetting? = nil) {
            self.destinations = destinations
            self.proxy = proxy
        }
    }

    private let limits: Limits
    private let queue = DispatchQueue(label: "ferry.requests")
    private let multi: CurlMulti
    /// Requests in flight: the handle, the body libcurl reads from, and who waits for the outcome.
    private var running: [ObjectIdentifier: Running] = [:]
    private var closed = false

    private final class Running {
        let easy: CurlEasy
        let body: UnsafeMutableRawBufferPointer
        let completion: @Sendable (RequestOutcome) -> Void
        /// Set when the destination guard refused an address.
        var refusal: String?

        init(easy: CurlEasy, body: UnsafeMutableRawBufferPointer, completion: @escaping @Sendable (RequestOutcome) -> Void) {
            self.easy = easy
            self.body = body
            self.completion = completion
        }
    }

    /// - Parameter connections: connections kept open for reuse; at least as many as requests sent at once, or
    ///   libcurl closes some as each burst ends and connects again for the next (a quarter of the notices of a
    ///   batch of small files opened a connection with 8 kept and 16 sent at once).
    public init(limits: Limits, connections: Int = 16) {
        self.limits = limits
        multi = CurlMulti(queue: queue, maxConnects: connections)
    }

    /// Sends `request`; returns how it ended.
    public func send(_ request: OutgoingRequest) async -> RequestOutcome {
        await withCheckedContinuation { continuation in
            send(request) { continuation.resume(returning: $0) }
        }
    }

    /// Sends `request`; `completion` runs once, on the runner's queue.
    public func send(_ request: OutgoingRequest, completion: @escaping @Sendable (RequestOutcome) -> Void) {
        queue.async { [self] in start(request, completion: completion) }
    }

    /// Ends every request in flight (`.failed`), closes cached connections, and returns once every socket is closed.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                closed = true
                for entry in running.values {
                    multi.remove(entry.easy)
                    finish(entry, .failed("Ferry is shutting down"))
                }
                running.removeAll()
                multi.close { continuation.resume() }
            }
        }
    }

    // MARK: On the queue

    private func start(_ request: OutgoingRequest, completion: @escaping @Sendable (RequestOutcome) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { completion(.failed("Ferry is shutting down")); return }
        guard limits.proxy != nil else { begin(request, pins: [], completion: completion); return }
        DestinationResolver.pin(request.url, policy: limits.destinations, queue: queue) { [self] result in
            switch result {
            case .success(let pin): begin(request, pins: [pin], completion: completion)
            case .failure(.forbidden(let detail)): completion(.refused(detail))
            case .failure(.unresolved(let detail)): completion(.failed(detail))
            }
        }
    }

    /// Adds the request's exchange (through the proxy to `pins` when there is one).
    private func begin(_ request: OutgoingRequest, pins: [DestinationPin], completion: @escaping @Sendable (RequestOutcome) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { completion(.failed("Ferry is shutting down")); return }
        let easy: CurlEasy
        do { easy = try CurlEasy() } catch { completion(.failed("\(error)")); return }
        let body = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.body.count), alignment: 1)
        request.body.withUnsafeBytes { body.copyMemory(from: $0) }
        let entry = Running(easy: easy, body: body, completion: completion)
        do {
            try configure(easy, request, body: body, pins: pins)
            // Response heads and bodies are read and dropped: only the status matters.
            easy.onHeaderLine = { _ in true }
            easy.onBody = { _ in .consumed }
            easy.onConnect = { [unowned self, unowned entry] bytes in
                if limits.proxy != nil { return true }  // only ever the proxy: the guard ran on the pin
                guard let address = IPAddress(bytes: bytes) else {
                    entry.refusal = "refused to connect to an address that is not IPv4 or IPv6"
                    return false
                }
                guard let refusal = limits.destinations.refusal(of: address) else { return true }
                entry.refusal = refusal
                return false
            }
            try multi.add(easy) { [unowned self] code in
                running[ObjectIdentifier(entry)] = nil
                finish(entry, outcome(of: entry, code))
            }
            running[ObjectIdentifier(entry)] = entry
        } catch {
            finish(entry, .failed("\(error)"))
        }
    }

    private func configure(_ easy: CurlEasy, _ request: OutgoingRequest, body: UnsafeMutableRawBufferPointer, pins: [DestinationPin]) throws(CurlError) {
        try easy.set(CURLOPT_URL, request.url.normalized)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(limits.connectTimeout * 1000))
        try easy.set(CURLOPT_TIMEOUT_MS, Int(limits.totalTimeout * 1000))
        try easy.set(CURLOPT_USERAGENT, limits.userAgent)
        // Never a proxy from `http_proxy`/`https_proxy`/`ALL_PROXY`: the guard would see only the proxy's address.
        if let proxy = limits.proxy {
            try easy.route(through: proxy, pins: pins)
        } else {
            try easy.set(CURLOPT_PROXY, "")
        }
        try easy.set(CURLOPT_POST, 1)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(request.body.count))
        let code = ferry_easy_setopt_ptr(easy.handle, CURLOPT_POSTFIELDS, body.baseAddress)
        guard code == CURLE_OK else { throw CurlError(easy: code, call: "curl_easy_setopt(CURLOPT_POSTFIELDS)") }
        if request.method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, request.method) }
        // No `Expect: 100-continue` round trip for a small body.
        try easy.setHeaders(request.headers + ["Expect:"])
    }

    private func outcome(of entry: Running, _ code: CURLcode) -> RequestOutcome {
        // One address refused and another connected (`localhost`: ::1, then 127.0.0.1) is an answer.
        if code != CURLE_OK, let refusal = entry.refusal { return .refused(refusal) }
        guard code == CURLE_OK else {
            let detail = entry.easy.errorDetail
            let name = String(cString: curl_easy_strerror(code))
            return .failed(detail.isEmpty ? "\(name) (curl error \(code.rawValue))" : "\(name): \(detail) (curl error \(code.rawValue))")
        }
        return .answered(status: entry.easy.responseCode)
    }

    /// Frees the handle and the body, then tells the caller.
    private func finish(_ entry: Running, _ outcome: RequestOutcome) {
        entry.easy.cleanup()
        entry.body.deallocate()
        entry.completion(outcome)
    }
}
