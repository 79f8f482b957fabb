import FerryCore
import FerryStore
import Foundation

/// A validated job request (`POST /api/v1/jobs` body): every field checked, unknown fields ignored.
///
/// Pure: built from decoded JSON by `JobDraft.validate`, which throws an `APIError` naming the field.
struct JobDraft: Sendable, Equatable {
    var url: SubmittedURL
    /// Where the job's webhook notices go, checked like `url`; not part of `dedupeKey`.
    var notify: SubmittedURL? = nil
    var filename: String?
    var headers: [HeaderField]
    /// The digest the file must have: `checksum`, or `sha256` (its short form for SHA-256).
    var checksum: Checksum?
    var priority: Int
    var maxBytesPerSecond: Int64?
    var connections: Int?
    var paused: Bool
    var dedupe: Bool
    /// The user's labels, as given (`TagList`); not part of `dedupeKey`.
    var tags: [String] = []
    /// Where the finished file goes next (API `deliver`), its target checked like `url`; not part of `dedupeKey`.
    var deliver: Delivery? = nil
    /// More URLs for the same file (API `mirrors`), each checked like `url`; not part of `dedupeKey`.
    var mirrors: [SubmittedURL] = []

    /// Which query parameters the key leaves out (`--cache-key-ignore`; the same rule as fetch-through's cache key).
    var keyRule: CacheKeyRule = .standard

    /// Mirrors a job may have: with `url`, one connection each at most 16.
    static let maxMirrors = 15

    /// URL (normalized) plus the request headers, names lower-cased and sorted: two jobs with the
    /// same key fetch the same thing (API.md, "dedupe").
    var dedupeKey: String {
        let headerPart = headers
            .map { "\($0.name.lowercased()):\($0.value)" }
            .sorted()
            .joined(separator: "\n")
        let urlKey = keyRule.key(for: url)
        return headerPart.isEmpty ? urlKey : urlKey + "\n" + headerPart
    }

    /// Request headers a job may not set: the engine owns them (API.md: Host, Range, hop-by-hop).
    static let refusedHeaders: Set<String> = [
        "host", "range", "if-range", "content-length", "transfer-encoding", "connection", "keep-alive",
        "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate", "proxy-connection", "expect",
    ]

    static let maxHeaderCount = 64

    /// The JSON body as it is decoded; every field optional so that absence and `null` mean "default".
    struct Body: Decodable {
        var url: String?
        var notify: String?
        var filename: String?
        var headers: [String: String]?
        var sha256: String?
        var checksum: ChecksumBody?
        var priority: Int?
        var maxBytesPerSecond: Int64?
        var connections: Int?
        var paused: Bool?
        var dedupe: Bool?
        var tags: [String]?
        var deliver: DeliverBody?
        var mirrors: [String]?
    }

    /// The `checksum` object as it is decoded.
    struct ChecksumBody: Decodable {
        var algorithm: String?
        var value: String?
    }

    /// The `deliver` object as it is decoded.
    struct DeliverBody: Decodable {
        var url: String?
        var method: String?
        var field: String?
        var fields: [String: String]?
        var headers: [String: String]?
        var deleteAfter: Bool?
    }

    /// Checks a decoded body.
    /// - Parameter destinations: a literal address it refuses is refused now (`forbidden_destination`), and so are
    ///   loopback names; other names are checked later on the address actually connected.
    static func validate(_ body: Body, destinations: AddressPolicy) throws(APIError) -> JobDraft {
        guard let text = body.url else { throw APIError(.invalidRequest, "'url' is required") }
        let url = try checkedDestination(text, destinations: destinations, schemes: SubmittedURL.downloadSchemes)
        let notify = try body.notify.map { text throws(APIError) in try checkedDestination(text, destinations: destinations) }
        var filename: String?
        if let requested = body.filename {
            guard let clean = Filename.sanitize(requested) else {
                throw APIError(.invalidRequest, "'filename' has nothing usable left after removing path separators and control characters")
            }
            filename = clean
        }
        let headers = try checkedHeaders(body.headers, field: "headers")
        let checksum = try checkedChecksum(sha256: body.sha256, checksum: body.checksum)
        let priority = body.priority ?? 0
        guard (-1_000_000...1_000_000).contains(priority) else {
            throw APIError(.invalidRequest, "'priority' must be between -1000000 and 1000000")
        }
        if let rate = body.maxBytesPerSecond, rate < 1 {
            throw APIError(.invalidRequest, "'maxBytesPerSecond' must be a positive number of bytes per second")
        }
        if let n = body.connections, !(1...16).contains(n) {
            throw APIError(.invalidRequest, "'connections' must be between 1 and 16")
        }
        var draft = JobDraft(
            url: url, filename: filename, headers: headers, checksum: checksum, priority: priority,
            maxBytesPerSecond: body.maxBytesPerSecond, connections: body.connections,
            paused: body.paused ?? false, dedupe: body.dedupe ?? true, tags: try TagList.validate(body.tags ?? []))
        draft.notify = notify
        draft.deliver = try body.deliver.map { given throws(APIError) in try checkedDelivery(given, destinations: destinations) }
        draft.mirrors = try checkedMirrors(body.mirrors ?? [], of: url, destinations: destinations)
        return draft
    }

    /// The expected digest: `checksum` (an algorithm API.md lists and a value of its length in hex), or `sha256`,
    /// its short form for SHA-256. Both may be given only when they say the same.
    static func checkedChecksum(sha256: String?, checksum given: ChecksumBody?) throws(APIError) -> Checksum? {
        var short: Checksum?
        if let sha256 {
            do { short = try Checksum(algorithm: .sha256, value: sha256) } catch {
                throw APIError(.invalidRequest, "'sha256' must be 64 hexadecimal digits")
            }
        }
        guard let given else { return short }
        guard let name = given.algorithm else {
            throw APIError(.invalidRequest, "'checksum.algorithm' is required: one of \(DigestAlgorithm.names)")
        }
        guard let value = given.value else { throw APIError(.invalidRequest, "'checksum.value' is required (hex)") }
        let checksum: Checksum
        do { checksum = try Checksum(algorithmName: name, value: value) } catch {
            let field = if case .unknownAlgorithm = error { "checksum.algorithm" } else { "checksum.value" }
            throw APIError(.invalidRequest, "'\(field)': \(error)")
        }
        if let short, short != checksum {
            throw APIError(.invalidRequest, checksum.algorithm == .sha256
                ? "'sha256' and 'checksum' give different SHA-256 values: give one"
                : "'sha256' and 'checksum' (\(checksum.algorithm.rawValue)) both given: give one expected digest")
        }
        return checksum
    }

    /// Request headers a user gave (`field` names them in errors): tokens for names, no control characters in
    /// values, none of the headers Ferry manages.
    static func checkedHeaders(_ given: [String: String]?, field: String) throws(APIError) -> [HeaderField] {
        guard let given else { return [] }
        guard given.count <= maxHeaderCount else {
            throw APIError(.invalidRequest, "'\(field)' may hold at most \(maxHeaderCount) fields")
        }
        var headers: [HeaderField] = []
        for (name, value) in given.sorted(by: { $0.key < $1.key }) {
            guard isToken(name) else { throw APIError(.invalidRequest, "'\(field)' has an invalid header name '\(name)'") }
            if refusedHeaders.contains(name.lowercased()) || name.lowercased().hasPrefix("proxy-") {
                throw APIError(.invalidRequest, "'\(field)' may not set '\(name)': Ferry manages it")
            }
            guard value.utf8.count <= 8192, !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
                throw APIError(.invalidRequest, "'\(field)' has an invalid value for '\(name)'")
            }
            headers.append(HeaderField(name: name, value: value))
        }
        return headers
    }

    /// The `deliver` object: an http(s) target checked like `url`, `PUT` (default) or `POST`, the file's part name,
    /// text parts and headers for the target.
    static func checkedDelivery(_ given: DeliverBody, destinations: AddressPolicy) throws(APIError) -> Delivery {
        guard let text = given.url else { throw APIError(.invalidRequest, "'deliver.url' is required") }
        let url = try checkedDestination(text, destinations: destinations)
        let method: Delivery.Method
        switch given.method?.uppercased() ?? "PUT" {
        case "PUT": method = .put
        case "POST": method = .post
        default: throw APIError(.invalidRequest, "'deliver.method' must be PUT or POST")
        }
        let field = given.field ?? "file"
        guard isToken(field) else { throw APIError(.invalidRequest, "'deliver.field' must be a non-empty token (letters, digits, -_.)") }
        var fields: [HeaderField] = []
        for (name, value) in (given.fields ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard isToken(name), value.utf8.count <= 65_536 else {
                throw APIError(.invalidRequest, "'deliver.fields' has an invalid part '\(name)'")
            }
            fields.append(HeaderField(name: name, value: value))
        }
        guard fields.count <= maxHeaderCount else { throw APIError(.invalidRequest, "'deliver.fields' may hold at most \(maxHeaderCount) parts") }
        if method == .put, !fields.isEmpty { throw APIError(.invalidRequest, "'deliver.fields' needs method POST") }
        return Delivery(url: url.normalized, method: method, field: field, fields: fields,
                        headers: try checkedHeaders(given.headers, field: "deliver.headers"), deleteAfter: given.deleteAfter ?? false)
    }

    /// The `mirrors`: each checked like `url` (the error names which one), none repeating `url` or another mirror.
    static func checkedMirrors(_ given: [String], of url: SubmittedURL, destinations: AddressPolicy) throws(APIError) -> [SubmittedURL] {
        guard given.count <= maxMirrors else { throw APIError(.invalidRequest, "'mirrors' may hold at most \(maxMirrors) URLs") }
        guard given.isEmpty || SubmittedURL.webSchemes.contains(url.scheme) else {
            throw APIError(.invalidRequest, "'mirrors' need an http or https 'url' (ftp, ftps and sftp sources use one connection)")
        }
        var seen: Set<String> = [url.dedupeKey]
        var mirrors: [SubmittedURL] = []
        for (index, text) in given.enumerated() {
            let mirror: SubmittedURL
            do {
                mirror = try checkedDestination(text, destinations: destinations)
            } catch {
                throw APIError(error.code, "'mirrors[\(index)]': \(error.message)")
            }
            guard seen.insert(mirror.dedupeKey).inserted else {
                throw APIError(.invalidRequest, "'mirrors[\(index)]' repeats the job's url or another mirror")
            }
            mirrors.append(mirror)
        }
        return mirrors
    }

    /// A URL of one of `schemes` (http and https unless told: a job's source also takes ftp, ftps and sftp) parsed as
    /// WHATWG does; a literal address `destinations` refuses is refused now (`forbidden_destination`), and so are
    /// loopback names; other names are checked on the address connected.
    static func checkedDestination(
        _ text: String, destinations: AddressPolicy, schemes: Set<String> = SubmittedURL.webSchemes
    ) throws(APIError) -> SubmittedURL {
        let url: SubmittedURL
        do { url = try SubmittedURL.parse(text, schemes: schemes) } catch { throw APIError(error) }
        let refusal: String?
        switch url.host {
        case .ipv4(let address), .ipv6(let address): refusal = destinations.refusal(of: address)
        case .domain(let name): refusal = destinations.refusal(ofName: name)
        }
        if let refusal { throw APIError(.forbiddenDestination, refusal) }
        return url
    }

    /// RFC 9110 token characters.
    static func isToken(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 256 else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
