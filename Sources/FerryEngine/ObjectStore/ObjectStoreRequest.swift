/// One S3 request, built without sockets: method, path-style URL, header lines and body. `ObjectStoreClient`
/// sends it; libcurl signs it (`CURLOPT_AWS_SIGV4`), so nothing here knows about signatures.
///
/// Two rules keep libcurl 7.88's signature right (ENGINE-NOTES, "Object store"): every query parameter carries
/// `=` (`?uploads=`, not `?uploads`), and parameters are written sorted by name, already encoded, so the query
/// sent is the canonical one. Keys are encoded the same way (RFC 3986 unreserved characters kept, `/` kept
/// between segments), so the path sent is the canonical URI. No `Expect:` header is ever added: libcurl signs
/// an emptied header it then does not send. Bodies, a POST's too, are read by libcurl's read callback
/// (`ObjectStoreClient`): a POST body libcurl 7.88 is given in memory is signed wrongly.
public struct ObjectStoreRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET", head = "HEAD", put = "PUT", post = "POST", delete = "DELETE"
    }

    /// What the request sends.
    public enum Body: Sendable, Equatable {
        case none
        /// A small document held in memory (the completion list, a small object).
        case bytes([UInt8])
        /// `length` bytes of an open file from `offset`, read by libcurl's read callback as it sends them (never a
        /// whole part in memory). The descriptor stays the caller's: it is not closed here.
        case file(descriptor: Int32, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .none: return 0
            case .bytes(let bytes): return Int64(bytes.count)
            case .file(_, _, let length): return length
            }
        }
    }

    public let operation: ObjectStoreOperation
    public let method: Method
    public let url: String
    /// "Name: value" lines.
    public let headers: [String]
    public let body: Body

    // MARK: the operations

    /// A cheap authenticated request on the bucket (`ListObjectsV2` with `max-keys=0`): succeeds when the
    /// endpoint answers, the credentials are accepted and the bucket exists.
    static func checkBucket(_ location: ObjectStoreLocation) -> ObjectStoreRequest {
        make(.checkBucket, .get, location, key: nil, query: [("list-type", "2"), ("max-keys", "0")])
    }

    /// Starts a multipart upload of `key`; the object will carry `metadata` as `x-amz-meta-<name>` headers.
    static func createMultipartUpload(_ location: ObjectStoreLocation, key: String, contentType: String?,
                                      metadata: [String: String]) throws(ObjectStoreError) -> ObjectStoreRequest {
        let lines = try objectHeaders(.createMultipartUpload, location, contentType: contentType, metadata: metadata)
        return make(.createMultipartUpload, .post, location, key: key, query: [("uploads", "")], headers: lines, body: .bytes([]))
    }

    static func uploadPart(_ location: ObjectStoreLocation, key: String, uploadID: String, partNumber: Int,
                           descriptor: Int32, offset: Int64, length: Int64) -> ObjectStoreRequest {
        precondition((1...10_000).contains(partNumber), "S3 part numbers are 1...10000")
        return make(.uploadPart, .put, location, key: key,
                    query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
                    body: .file(descriptor: descriptor, offset: offset, length: length))
    }

    /// Part `partNumber` copied by the store from the bytes `range` of the object `sourceKey` in the same bucket (no
    /// bytes sent).
    static func uploadPartCopy(_ location: ObjectStoreLocation, key: String, uploadID: String, partNumber: Int,
                               sourceKey: String, range: ClosedRange<Int64>) -> ObjectStoreRequest {
        precondition((1...10_000).contains(partNumber), "S3 part numbers are 1...10000")
        return make(.uploadPartCopy, .put, location, key: key,
                    query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
                    headers: ["x-amz-copy-source: /\(location.bucket)/\(encodedKey(sourceKey))",
                              "x-amz-copy-source-range: bytes=\(range.lowerBound)-\(range.upperBound)"],
                    body: .bytes([]))
    }

    /// One page of the parts stored so far, from after `marker`.
    static func listParts(_ location: ObjectStoreLocation, key: String, uploadID: String, marker: Int?) -> ObjectStoreRequest {
        var query = [("max-parts", "1000"), ("uploadId", uploadID)]
        if let marker { query.append(("part-number-marker", String(marker))) }
        return make(.listParts, .get, location, key: key, query: query)
    }

    /// The unfinished uploads whose keys start with `prefix` (`ListMultipartUploads`: one page, up to 1,000).
    static func listMultipartUploads(_ location: ObjectStoreLocation, prefix: String) -> ObjectStoreRequest {
        make(.listMultipartUploads, .get, location, key: nil, query: [("prefix", prefix), ("uploads", "")])
    }

    static func completeMultipartUpload(_ location: ObjectStoreLocation, key: String, uploadID: String,
                                        parts: [UploadedPart]) -> ObjectStoreRequest {
        make(.completeMultipartUpload, .post, location, key: key, query: [("uploadId", uploadID)],
             headers: ["Content-Type: application/xml"], body: .bytes(S3Documents.completion(parts)))
    }

    static func abortMultipartUpload(_ location: ObjectStoreLocation, key: String, uploadID: String) -> ObjectStoreRequest {
        make(.abortMultipartUpload, .delete, location, key: key, query: [("uploadId", uploadID)])
    }

    /// Stores a whole (small) object from `length` bytes of a file, or from memory.
    static func putObject(_ location: ObjectStoreLocation, key: String, body: Body, contentType: String?,
                          metadata: [String: String]) throws(ObjectStoreError) -> ObjectStoreRequest {
        let lines = try objectHeaders(.putObject, location, contentType: contentType, metadata: metadata)
        return make(.putObject, .put, location, key: key, headers: lines, body: body)
    }

    /// Replaces an object's type and metadata (`CopyObject` onto itself with `REPLACE`, copied inside the store).
    static func replaceMetadata(_ location: ObjectStoreLocation, key: String, contentType: String?,
                                metadata: [String: String]) throws(ObjectStoreError) -> ObjectStoreRequest {
        let lines = try objectHeaders(.copyObject, location, contentType: contentType, metadata: metadata)
        return make(.copyObject, .put, location, key: key,
                    headers: ["x-amz-copy-source: /\(location.bucket)/\(encodedKey(key))", "x-amz-metadata-directive: REPLACE"] + lines,
                    body: .bytes([]))
    }

    static func headObject(_ location: ObjectStoreLocation, key: String) -> ObjectStoreRequest {
        make(.headObject, .head, location, key: key)
    }

    /// The object, or the bytes `range` covers (inclusive offsets, as HTTP writes them).
    static func getObject(_ location: ObjectStoreLocation, key: String, range: ClosedRange<Int64>?) -> ObjectStoreRequest {
        let lines = range.map { ["Range: bytes=\($0.lowerBound)-\($0.upperBound)"] } ?? []
        return make(.getObject, .get, location, key: key, headers: lines)
    }

    static func deleteObject(_ location: ObjectStoreLocation, key: String) -> ObjectStoreRequest {
        make(.deleteObject, .delete, location, key: key)
    }

    // MARK: parts of a request

    private static func make(_ operation: ObjectStoreOperation, _ method: Method, _ location: ObjectStoreLocation,
                             key: String?, query: [(String, String)] = [], headers: [String] = [],
                             body: Body = .none) -> ObjectStoreRequest {
        var url = location.bucketURL
        if let key { url += "/" + encodedKey(key) }
        if !query.isEmpty {
            let sorted = query.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
            url += "?" + sorted.map { "\(encoded($0.0))=\(encoded($0.1))" }.joined(separator: "&")
        }
        return ObjectStoreRequest(operation: operation, method: method, url: url, headers: headers, body: body)
    }

    /// `Content-Type` and `x-amz-meta-*` lines. Metadata names are lowercase letters, digits and hyphens; values
    /// visible ASCII and spaces (S3 sends them back as headers, so nothing else survives the trip).
    private static func objectHeaders(_ operation: ObjectStoreOperation, _ location: ObjectStoreLocation, contentType: String?,
                                      metadata: [String: String]) throws(ObjectStoreError) -> [String] {
        var lines: [String] = []
        if let contentType {
            guard isHeaderValue(contentType) else {
                throw ObjectStoreError(operation: operation, kind: .invalidRequest, endpoint: location.bucketURL,
                                       message: "the content type has characters a header cannot carry")
            }
            lines.append("Content-Type: \(contentType)")
        }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.utf8.allSatisfy({ isLowercaseAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else {
                throw ObjectStoreError(operation: operation, kind: .invalidRequest, endpoint: location.bucketURL,
                                       message: "metadata name \"\(name)\" is not lowercase letters, digits and hyphens")
            }
            guard isHeaderValue(value) else {
                throw ObjectStoreError(operation: operation, kind: .invalidRequest, endpoint: location.bucketURL,
                                       message: "metadata \"\(name)\" has characters a header cannot carry")
            }
            lines.append("x-amz-meta-\(name): \(value)")
        }
        return lines
    }

    private static func isHeaderValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { (0x20...0x7e).contains($0) } && value.first != " " && value.last != " "
    }

    private static func isLowercaseAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// A key as a URL path: each segment encoded, the `/` between segments kept.
    static func encodedKey(_ key: String) -> String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { encoded(String($0)) }.joined(separator: "/")
    }

    /// RFC 3986 encoding as SigV4 wants it: unreserved characters (`A-Z a-z 0-9 - . _ ~`) as they are, every
    /// other byte of the UTF-8 as `%XX` with uppercase hex.
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 0x0f)])"
            }
        }
        return out
    }
}
