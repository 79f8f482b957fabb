import CCurl
import Foundation

/// HTTP exchanges with one Ferry through one libcurl easy handle, blocking the calling thread.
///
/// The client runs one command on one thread, so the easy interface is all it needs: `curl_easy_perform` with
/// callbacks that hand the head and body to the caller. The handle is reused between requests (libcurl keeps
/// the connection alive). Not thread-safe: one command owns its session and uses it from one thread.
public final class CurlSession {
    public let endpoint: ServerEndpoint
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private let noProxy: String
    private let direct: Bool

    /// - Parameters:
    ///   - environment: where `NO_PROXY` is read from.
    ///   - direct: never use a proxy, not even one the environment names (`ferry health` asks a service on this
    ///     machine). Otherwise a proxy from the environment is used for remote servers only.
    /// - Throws: `ClientError.failed` when libcurl cannot make a handle.
    public init(endpoint: ServerEndpoint, environment: [String: String] = ProcessInfo.processInfo.environment,
                direct: Bool = false) throws(ClientError)
    {
        guard let handle = curl_easy_init() else { throw .failed("libcurl could not create a handle") }
        self.endpoint = endpoint
        self.handle = handle
        self.direct = direct
        // A proxy from the environment stays in use for remote servers, but never for this machine.
        let listed = environment["NO_PROXY"] ?? environment["no_proxy"] ?? ""
        noProxy = ([listed] + ["localhost", "127.0.0.1", "::1"]).filter { !$0.isEmpty }.joined(separator: ",")
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Sends `request` and collects the whole response.
    public func send(_ request: ClientRequest) throws(ClientError) -> ClientResponse {
        var head = ResponseHead(status: 0, headers: [])
        var body: [UInt8] = []
        _ = try stream(request, onHead: { head = $0 }, onBody: { chunk in
            body.append(contentsOf: chunk)
            return .continue
        })
        return ClientResponse(head: head, body: body)
    }

    /// Sends `request` and hands the response to the callbacks as it arrives.
    /// - Parameters:
    ///   - onHead: the final status and headers, before any body byte. A thrown error ends the exchange and is
    ///     rethrown.
    ///   - onBody: each body chunk; `.stop` ends the exchange early (then the result is `.stopped`).
    ///   - onIdle: called about once a second and after each chunk, to redraw a display; may be nil.
    public func stream(_ request: ClientRequest, onHead: (ResponseHead) throws -> Void,
                       onBody: (UnsafeRawBufferPointer) throws -> StreamDecision,
                       onIdle: (() -> Void)? = nil) throws(ClientError) -> StreamEnd {
        let url = endpoint.url(request.target)
        do {
            return try withoutActuallyEscaping(onHead) { onHead in
                try withoutActuallyEscaping(onBody) { onBody in
                    try withoutActuallyEscaping(onIdle ?? {}) { onIdle in
                        let exchange = Exchange(onHead: onHead, onBody: onBody, onIdle: onIdle)
                        return try perform(request, url: url, exchange: exchange)
                    }
                }
            }
        } catch {
            throw Self.clientError(error, url: url)
        }
    }

    private func perform(_ request: ClientRequest, url: String, exchange: Exchange) throws(ClientError) -> StreamEnd {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { if let headerList { curl_slist_free_all(headerList) } }
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        do {
            try set(CURLOPT_URL, url)
            try set(CURLOPT_NOSIGNAL, 1)
            try set(CURLOPT_TCP_NODELAY, 1)
            try set(CURLOPT_USERAGENT, "ferry-client/1")
            try set(CURLOPT_NOPROXY, noProxy)
            // An empty proxy name turns proxies off, those of the environment included.
            if direct { try set(CURLOPT_PROXY, "") }
            try set(CURLOPT_CONNECTTIMEOUT_MS, 10_000)
            try check(ferry_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
            switch request.patience {
            case .call:
                try set(CURLOPT_TIMEOUT_MS, 60_000)
            case .stream:
                try set(CURLOPT_LOW_SPEED_LIMIT, 1)
                try set(CURLOPT_LOW_SPEED_TIME, 45)
            case .transfer:
                try set(CURLOPT_LOW_SPEED_LIMIT, 1)
                try set(CURLOPT_LOW_SPEED_TIME, 60)
            case .probe(let seconds):
                let milliseconds = max(1, Int(min(seconds, 86_400) * 1000))
                try set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
                try set(CURLOPT_TIMEOUT_MS, milliseconds)
            }
            switch request.method {
            case "GET":
                try set(CURLOPT_HTTPGET, 1)
            case "HEAD":
                try set(CURLOPT_NOBODY, 1)
            case "POST":
                break
            default:
                try set(CURLOPT_CUSTOMREQUEST, request.method)
            }
            var lines = request.headers.map { "\($0.name): \($0.value)" }
            if let token = endpoint.token { lines.append("Authorization: Bearer \(token)") }
            if let body = request.body {
                try set(CURLOPT_POST, 1)
                try check(ferry_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                          "CURLOPT_POSTFIELDSIZE_LARGE")
                var copy = body + [0]
                let code = copy.withUnsafeMutableBytes { ferry_easy_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
                try check(code, "CURLOPT_COPYPOSTFIELDS")
                lines.append("Expect:")
            }
            for line in lines { headerList = curl_slist_append(headerList, line) }
            try check(ferry_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
            try check(ferry_easy_setopt_write_cb(handle, CURLOPT_HEADERFUNCTION, Self.headerCallback), "CURLOPT_HEADERFUNCTION")
            try check(ferry_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
            try check(ferry_easy_setopt_write_cb(handle, CURLOPT_WRITEFUNCTION, Self.writeCallback), "CURLOPT_WRITEFUNCTION")
            try check(ferry_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
            try set(CURLOPT_NOPROGRESS, 0)
            try check(ferry_easy_setopt_xferinfo_cb(handle, Self.progressCallback), "CURLOPT_XFERINFOFUNCTION")
            try check(ferry_easy_setopt_ptr(handle, CURLOPT_XFERINFODATA, context), "CURLOPT_XFERINFODATA")
        }
        let code = withExtendedLifetime(exchange) { curl_easy_perform(handle) }
        if let failure = exchange.failure { throw Self.clientError(failure, url: url) }
        if exchange.stopped { return .stopped }
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            throw .transport(url: endpoint.baseURL,
                             detail: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        if !exchange.headDelivered {
            do { try exchange.deliverHead() } catch { exchange.failure = error }
        }
        if let failure = exchange.failure { throw Self.clientError(failure, url: url) }
        return .completed
    }

    private static func clientError(_ error: any Error, url: String) -> ClientError {
        if let error = error as? ClientError { return error }
        return .failed("\(error)")
    }

    private func set(_ option: CURLoption, _ value: Int) throws(ClientError) {
        try check(ferry_easy_setopt_long(handle, option, value), "option \(option.rawValue)")
    }

    private func set(_ option: CURLoption, _ value: String) throws(ClientError) {
        try check(ferry_easy_setopt_string(handle, option, value), "option \(option.rawValue)")
    }

    private func check(_ code: CURLcode, _ what: String) throws(ClientError) {
        guard code == CURLE_OK else {
            throw .failed("libcurl refused \(what): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    // MARK: One exchange's callbacks

    /// The state of one `perform`: the head being read, the caller's callbacks, and the first error they threw.
    private final class Exchange {
        let onHead: (ResponseHead) throws -> Void
        let onBody: (UnsafeRawBufferPointer) throws -> StreamDecision
        let onIdle: () -> Void
        var status = 0
        var headers: [ClientRequest.Header] = []
        var headDelivered = false
        var failure: (any Error)?
        var stopped = false

        init(onHead: @escaping (ResponseHead) throws -> Void,
             onBody: @escaping (UnsafeRawBufferPointer) throws -> StreamDecision, onIdle: @escaping () -> Void) {
            self.onHead = onHead
            self.onBody = onBody
            self.onIdle = onIdle
        }

        func deliverHead() throws {
            headDelivered = true
            try onHead(ResponseHead(status: status, headers: headers))
        }

        /// One header line as libcurl gives it: a status line, `Name: value`, or the empty line ending a block.
        func headerLine(_ line: String) -> Bool {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.hasPrefix("HTTP/") {
                let parts = trimmed.split(separator: " ", maxSplits: 2)
                status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
                headers = []
                return true
            }
            if trimmed.isEmpty {
                // The end of a head; 1xx heads (100 Continue) are followed by the real one.
                guard status >= 200, !headDelivered else { return true }
                do { try deliverHead() } catch {
                    failure = error
                    return false
                }
                return true
            }
            if headDelivered { return true }  // trailers
            if let colon = trimmed.firstIndex(of: ":") {
                headers.append(ClientRequest.Header(
                    String(trimmed[..<colon]), trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            return true
        }

        func body(_ chunk: UnsafeRawBufferPointer) -> Bool {
            do {
                if !headDelivered { try deliverHead() }
                switch try onBody(chunk) {
                case .continue:
                    onIdle()
                    return true
                case .stop:
                    stopped = true
                    return false
                }
            } catch {
                failure = error
                return false
            }
        }
    }

    private static func exchange(_ pointer: UnsafeMutableRawPointer?) -> Exchange? {
        pointer.map { Unmanaged<Exchange>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let headerCallback: curl_write_callback = { data, size, count, userdata in
        let length = size * count
        guard let exchange = exchange(userdata), let data else { return 0 }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        return exchange.headerLine(line) ? length : 0
    }

    private static let writeCallback: curl_write_callback = { data, size, count, userdata in
        let length = size * count
        guard let exchange = exchange(userdata) else { return 0 }
        return exchange.body(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
    }

    private static let progressCallback: curl_xferinfo_callback = { userdata, _, _, _, _ in
        exchange(userdata)?.onIdle()
        return 0
    }
}
