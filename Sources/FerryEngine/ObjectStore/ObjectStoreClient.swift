import CCurl
import Dispatch
import Foundation

/// The S3 client of a cluster's object store: sends `ObjectStoreRequest`s through libcurl on the engine's multi
/// handle and reads the answers into values or `ObjectStoreError`s.
///
/// Owner: the queue of the `CurlMulti` it is given (the engine's `queue`, see `DownloadEngine.objectStoreClient`);
/// every libcurl call and the table of running exchanges live there, checked with `dispatchPrecondition`. The
/// public operations may be called from any thread; they hop onto the queue and return when the exchange ended.
///
/// Requests are signed by libcurl (`CURLOPT_AWS_SIGV4` "aws:amz:<region>:s3" with the key pair as user name and
/// password), never by hand. They carry the baseline every Ferry request has (`CurlEasy.applyBaseline`: no proxy,
/// no redirects, connect and stall timeouts) but not the destination guard: the endpoint is chosen by the
/// operator, like a loopback test store, not by a user. Nothing is retried here: each error says whether trying
/// again can help (`ObjectStoreError.isRetryable`), and the caller decides when.
///
/// Before the engine's multi is closed, `stop()` ends what is still running (with `.stopped`).
public final class ObjectStoreClient: @unchecked Sendable {
    /// Timeouts and identity of the requests.
    public struct Limits: Sendable {
        public var connectTimeout: Double = 15
        /// Seconds below one byte per second before an exchange is given up.
        public var lowSpeedTime: Int = 60
        /// Seconds a request without a streamed body (everything but `UploadPart`, `PutObject` of a file and
        /// `GetObject`) may take in all.
        public var requestTimeout: Double = 60
        public var userAgent: String = "Ferry/0.1"

        public init() {}
    }

    public let location: ObjectStoreLocation
    private let credentials: ObjectStoreCredentials
    private let multi: CurlMulti
    private let queue: DispatchQueue
    /// Read on the queue for each request, so a changed engine configuration applies to the next one.
    private let limits: @Sendable () -> Limits
    private var running: [ObjectIdentifier: Exchange] = [:]
    private var stopped = false
    private let countsLock = NSLock()
    private var tally = Counts()

    /// Requests that ended, by operation, and the failures among them, by kind (`/metrics`).
    public struct Counts: Sendable, Equatable {
        public var requests: [ObjectStoreOperation: Int] = [:]
        public var errors: [ObjectStoreError.Kind: Int] = [:]
    }

    /// What ended so far (any thread).
    public var counts: Counts { countsLock.withLock { tally } }

    /// Largest answer body kept in memory (documents and error bodies; object bytes go to a sink).
    static let maxDocumentSize = 4 << 20

    init(location: ObjectStoreLocation, credentials: ObjectStoreCredentials, multi: CurlMulti,
         limits: @escaping @Sendable () -> Limits) {
        self.location = location
        self.credentials = credentials
        self.multi = multi
        self.queue = multi.queue
        self.limits = limits
    }

    // MARK: operations (any thread)

    /// Checks that the endpoint answers, the credentials are accepted and the bucket exists (readiness, start-up).
    public func checkBucket() async throws(ObjectStoreError) {
        _ = try await send(.checkBucket(location))
    }

    /// Starts a multipart upload of `key` and returns its upload id. `metadata` (`["sha256": hex]`) is kept with
    /// the object once completed; names are lowercase letters, digits and hyphens.
    public func createMultipartUpload(key: String, contentType: String? = nil, metadata: [String: String] = [:]) async throws(ObjectStoreError) -> String {
        let response = try await send(try .createMultipartUpload(location, key: key, contentType: contentType, metadata: metadata))
        return try document(.createMultipartUpload, response) { bytes throws(S3XMLError) in try S3Documents.uploadID(bytes) }
    }

    /// Uploads `length` bytes of the open file `descriptor` from `offset` as part `partNumber` (1...10000), read
    /// as they are sent. Every part but the last must be at least 5 MiB. The descriptor stays open.
    public func uploadPart(key: String, uploadID: String, partNumber: Int, descriptor: Int32, offset: Int64, length: Int64) async throws(ObjectStoreError) -> UploadedPart {
        let response = try await send(.uploadPart(location, key: key, uploadID: uploadID, partNumber: partNumber,
                                                  descriptor: descriptor, offset: offset, length: length))
        guard let etag = response.head.fields["etag"], !etag.isEmpty else {
            throw error(.uploadPart, .malformedResponse, status: response.head.status, message: "the answer has no ETag")
        }
        return UploadedPart(number: partNumber, etag: etag, size: length)
    }

    /// Makes part `partNumber` of an upload from the bytes `range` of the object `sourceKey` (copied inside the store).
    public func uploadPartCopy(key: String, uploadID: String, partNumber: Int, sourceKey: String,
                               range: ClosedRange<Int64>) async throws(ObjectStoreError) -> UploadedPart {
        let response = try await send(.uploadPartCopy(location, key: key, uploadID: uploadID, partNumber: partNumber,
                                                      sourceKey: sourceKey, range: range))
        let etag = try document(.uploadPartCopy, response) { bytes throws(S3XMLError) in try S3Documents.copiedPartETag(bytes) }
        return UploadedPart(number: partNumber, etag: etag, size: range.upperBound - range.lowerBound + 1)
    }

    /// The parts stored so far of an unfinished upload, in part order (every page of `ListParts`): what a node
    /// taking over a job continues from.
    public func listParts(key: String, uploadID: String) async throws(ObjectStoreError) -> [UploadedPart] {
        var parts: [UploadedPart] = []
        var marker: Int?
        repeat {
            let response = try await send(.listParts(location, key: key, uploadID: uploadID, marker: marker))
            let page = try document(.listParts, response) { bytes throws(S3XMLError) in try S3Documents.partsPage(bytes) }
            parts += page.parts
            guard page.nextMarker != marker else { break }  // a store repeating its marker would loop forever
            marker = page.nextMarker
        } while marker != nil
        return parts.sorted { $0.number < $1.number }
    }

    /// The unfinished uploads whose keys start with `prefix` (the first 1,000).
    public func unfinishedUploads(prefix: String) async throws(ObjectStoreError) -> [UnfinishedUpload] {
        let response = try await send(.listMultipartUploads(location, prefix: prefix))
        return try document(.listMultipartUploads, response) { bytes throws(S3XMLError) in
            try S3Documents.unfinishedUploads(bytes)
        }
    }

    /// Makes the object from `parts` (their numbers and ETags); returns the object's ETag.
    public func completeMultipartUpload(key: String, uploadID: String, parts: [UploadedPart]) async throws(ObjectStoreError) -> String {
        let response = try await send(.completeMultipartUpload(location, key: key, uploadID: uploadID, parts: parts))
        // S3 may answer 200 and then an <Error> when the completion failed after the status line was sent.
        if let failure = S3Documents.error(response.body) {
            throw error(.completeMultipartUpload, ObjectStoreError.kind(status: 500, code: failure.code),
                        status: response.head.status, code: failure.code, message: failure.message)
        }
        return try document(.completeMultipartUpload, response) { bytes throws(S3XMLError) in try S3Documents.completedETag(bytes) }
    }

    /// Drops an unfinished upload and its parts.
    public func abortMultipartUpload(key: String, uploadID: String) async throws(ObjectStoreError) {
        _ = try await send(.abortMultipartUpload(location, key: key, uploadID: uploadID))
    }

    /// Stores a small object from memory in one request; returns its ETag.
    public func putObject(key: String, bytes: [UInt8], contentType: String? = nil, metadata: [String: String] = [:]) async throws(ObjectStoreError) -> String {
        let response = try await send(try .putObject(location, key: key, body: .bytes(bytes), contentType: contentType, metadata: metadata))
        return response.head.fields["etag"] ?? ""
    }

    /// Stores `length` bytes of the open file `descriptor` from `offset` as the whole object in one request (read as
    /// they are sent; S3 takes up to 5 GiB so); returns its ETag. The descriptor stays open.
    public func putObject(key: String, descriptor: Int32, offset: Int64, length: Int64, contentType: String? = nil,
                          metadata: [String: String] = [:]) async throws(ObjectStoreError) -> String {
        let body = ObjectStoreRequest.Body.file(descriptor: descriptor, offset: offset, length: length)
        let response = try await send(try .putObject(location, key: key, body: body, contentType: contentType, metadata: metadata))
        return response.head.fields["etag"] ?? ""
    }

    /// Replaces the type and metadata of a stored object (copied onto itself inside the store).
    public func replaceMetadata(key: String, contentType: String? = nil, metadata: [String: String]) async throws(ObjectStoreError) {
        let response = try await send(try .replaceMetadata(location, key: key, contentType: contentType, metadata: metadata))
        if let failure = S3Documents.error(response.body) {
            throw error(.copyObject, ObjectStoreError.kind(status: 500, code: failure.code), status: response.head.status,
                        code: failure.code, message: failure.message)
        }
    }

    /// Size, ETag, type and metadata of an object.
    public func headObject(key: String) async throws(ObjectStoreError) -> ObjectInfo {
        try await send(.headObject(location, key: key)).head.object
    }

    /// Streams an object, or the bytes `range` covers, into `sink` as they arrive. The sink runs on the engine
    /// queue and must not block: a reader that cannot take more answers `.pause` and calls `reading.resume()`
    /// when it can. Returns what the answer's head said (`size` is the whole object's).
    public func getObject(key: String, range: ClosedRange<Int64>? = nil, reading: ObjectReading? = nil,
                          sink: @escaping Sink) async throws(ObjectStoreError) -> ObjectInfo {
        try await send(.getObject(location, key: key, range: range), sink: sink, reading: reading).head.object
    }

    /// Takes a chunk of an object's bytes (on the engine queue, inside a libcurl call).
    public typealias Sink = @Sendable (UnsafeRawBufferPointer) -> ObjectBodyDisposition

    public func deleteObject(key: String) async throws(ObjectStoreError) {
        _ = try await send(.deleteObject(location, key: key))
    }

    /// Ends every exchange still running with `.stopped`, and refuses new ones. Call before the multi is closed.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                stopped = true
                for exchange in running.values {
                    multi.remove(exchange.easy)
                    finish(exchange, .failure(error(exchange.request.operation, .stopped, message: "the object-store client was stopped")))
                }
                running.removeAll()
                continuation.resume()
            }
        }
    }

    // MARK: exchanges

    /// The answer to a request that succeeded (2xx): its head, and its body unless a sink took it.
    struct Response {
        var head: ObjectStoreResponseHead
        var body: [UInt8]
    }

    /// One request in flight. Confined to the queue.
    private final class Exchange {
        let request: ObjectStoreRequest
        let easy: CurlEasy
        let sink: Sink?
        let reading: ObjectReading?
        let completion: @Sendable (Result<Response, ObjectStoreError>) -> Void
        var head = ObjectStoreResponseHead()
        var body: [UInt8] = []
        /// The request body, handed to libcurl as it asks.
        var reader: RequestBodyReader
        /// Set when Ferry stopped the exchange from a callback (the sink refused, the file could not be read).
        var failure: ObjectStoreError?

        init(request: ObjectStoreRequest, easy: CurlEasy, sink: Sink?, reading: ObjectReading?,
             completion: @escaping @Sendable (Result<Response, ObjectStoreError>) -> Void) {
            self.request = request
            self.easy = easy
            self.sink = sink
            self.reading = reading
            self.completion = completion
            reader = RequestBodyReader(request.body)
        }
    }

    private func send(_ request: ObjectStoreRequest, sink: Sink? = nil, reading: ObjectReading? = nil) async throws(ObjectStoreError) -> Response {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Response, ObjectStoreError>, Never>) in
            start(request, sink: sink, reading: reading) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Sends `request`; `completion` runs once, on the queue. A 2xx answer is a success; any other answer, or no
    /// answer, is an `ObjectStoreError` classified once.
    func start(_ request: ObjectStoreRequest, sink: Sink?, reading: ObjectReading? = nil,
               completion: @escaping @Sendable (Result<Response, ObjectStoreError>) -> Void) {
        queue.async { [self] in
            guard !stopped else {
                completion(.failure(error(request.operation, .stopped, message: "the object-store client was stopped")))
                return
            }
            let easy: CurlEasy
            do { easy = try CurlEasy() } catch {
                completion(.failure(self.error(request.operation, .invalidRequest, message: "\(error)")))
                return
            }
            let exchange = Exchange(request: request, easy: easy, sink: sink, reading: reading, completion: completion)
            do {
                try configure(easy, request)
                easy.onHeaderLine = { [unowned exchange] line in
                    exchange.head.read(line)
                    return true
                }
                easy.onBody = { [unowned self, unowned exchange] bytes in receive(bytes, exchange) }
                easy.onRead = { [unowned self, unowned exchange] buffer in read(into: buffer, exchange) }
                // Strong: the client lives until its exchanges ended (the multi drops this closure then).
                try multi.add(easy) { [self] code in
                    running[ObjectIdentifier(exchange)] = nil
                    finish(exchange, outcome(of: exchange, code))
                }
                running[ObjectIdentifier(exchange)] = exchange
                let id = ObjectIdentifier(exchange)
                reading?.attach { [weak self] in
                    self?.queue.async { [weak self] in
                        guard let self, let exchange = running[id] else { return }
                        multi.unpause(exchange.easy)
                    }
                }
            } catch {
                finish(exchange, .failure(self.error(request.operation, .invalidRequest, message: "\(error)")))
            }
        }
    }

    private func configure(_ easy: CurlEasy, _ request: ObjectStoreRequest) throws(CurlError) {
        dispatchPrecondition(condition: .onQueue(queue))
        let limits = limits()
        try easy.applyBaseline(connectTimeout: limits.connectTimeout, lowSpeedLimit: 1, lowSpeedTime: limits.lowSpeedTime,
                               userAgent: limits.userAgent)
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_AWS_SIGV4, "aws:amz:\(location.region):s3")
        // User name and password apart rather than CURLOPT_USERPWD "key:secret": a key holding ':' stays whole.
        try easy.set(CURLOPT_USERNAME, credentials.accessKeyID)
        try easy.set(CURLOPT_PASSWORD, credentials.secretAccessKey)
        try easy.set(CURLOPT_BUFFERSIZE, 256 << 10)
        switch request.method {
        case .get: break
        case .head: try easy.set(CURLOPT_NOBODY, 1)
        case .delete: try easy.set(CURLOPT_CUSTOMREQUEST, "DELETE")
        case .put, .post:
            // Every body goes through the read callback, a POST's too: libcurl 7.88 signs a POST body given as
            // CURLOPT_POSTFIELDS wrongly (SeaweedFS answers SignatureDoesNotMatch), an uploaded one right.
            try easy.setUpload(size: request.body.length)
            try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, 512 << 10)
            if request.method == .post { try easy.set(CURLOPT_CUSTOMREQUEST, "POST") }
        }
        if case .file = request.body {} else if request.operation != .getObject {
            try easy.set(CURLOPT_TIMEOUT_MS, Int(limits.requestTimeout * 1000))
        }
        try easy.setHeaders(request.headers)
    }

    // MARK: libcurl callbacks (on the queue, inside a libcurl call)

    private func receive(_ bytes: UnsafeRawBufferPointer, _ exchange: Exchange) -> CurlEasy.BodyDisposition {
        if let sink = exchange.sink, (200..<300).contains(exchange.head.status) {
            switch sink(bytes) {
            case .consumed: return .consumed
            case .pause: return .pause
            case .stop:
                exchange.failure = error(exchange.request.operation, .stopped, status: exchange.head.status,
                                         message: "the reader stopped the object's bytes")
                return .abort
            }
        }
        guard exchange.body.count + bytes.count <= Self.maxDocumentSize else {
            exchange.failure = error(exchange.request.operation, .malformedResponse, status: exchange.head.status,
                                     message: "the answer is larger than \(Self.maxDocumentSize) bytes")
            return .abort
        }
        exchange.body.append(contentsOf: bytes)
        return .consumed
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer, _ exchange: Exchange) -> CurlEasy.ReadDisposition {
        switch exchange.reader.read(into: buffer) {
        case .filled(let count):
            return .filled(count)
        case .failed(let reason):
            exchange.failure = error(exchange.request.operation, .invalidRequest, message: reason)
            return .abort
        }
    }

    // MARK: outcome (on the queue, after the handle left the multi)

    private func outcome(of exchange: Exchange, _ code: CURLcode) -> Result<Response, ObjectStoreError> {
        dispatchPrecondition(condition: .onQueue(queue))
        let operation = exchange.request.operation
        if let failure = exchange.failure { return .failure(failure) }
        guard code == CURLE_OK else {
            var kind = ObjectStoreError.kind(curlCode: code)
            var connectTime: curl_off_t = 0
            _ = ferry_easy_getinfo_off(exchange.easy.handle, CURLINFO_CONNECT_TIME_T, &connectTime)
            if kind == .transfer, connectTime == 0 { kind = .unreachable }  // e.g. a connect timeout
            let detail = exchange.easy.errorDetail
            let name = CurlError.text(code)
            let message = detail.isEmpty ? "\(name) (curl error \(code.rawValue))" : "\(name): \(detail) (curl error \(code.rawValue))"
            return .failure(error(operation, kind, message: message))
        }
        let status = exchange.head.status
        if (200..<300).contains(status) { return .success(Response(head: exchange.head, body: exchange.body)) }
        let document = S3Documents.error(exchange.body)
        let message = document?.message ?? (exchange.body.isEmpty ? "" : String(decoding: exchange.body.prefix(200), as: UTF8.self))
        return .failure(error(operation, ObjectStoreError.kind(status: status, code: document?.code), status: status,
                              code: document?.code, message: message))
    }

    /// Frees the handle, then tells the caller.
    private func finish(_ exchange: Exchange, _ result: Result<Response, ObjectStoreError>) {
        countsLock.withLock {
            tally.requests[exchange.request.operation, default: 0] += 1
            if case .failure(let error) = result { tally.errors[error.kind, default: 0] += 1 }
        }
        exchange.reading?.attach(nil)
        exchange.easy.cleanup()
        exchange.completion(result)
    }

    private func document<T>(_ operation: ObjectStoreOperation, _ response: Response,
                             _ parse: ([UInt8]) throws(S3XMLError) -> T) throws(ObjectStoreError) -> T {
        do {
            return try parse(response.body)
        } catch {
            throw self.error(operation, .malformedResponse, status: response.head.status, message: "\(error)")
        }
    }

    private func error(_ operation: ObjectStoreOperation, _ kind: ObjectStoreError.Kind, status: Int? = nil,
                       code: String? = nil, message: String) -> ObjectStoreError {
        ObjectStoreError(operation: operation, kind: kind, endpoint: location.bucketURL, status: status, code: code, message: message)
    }
}
