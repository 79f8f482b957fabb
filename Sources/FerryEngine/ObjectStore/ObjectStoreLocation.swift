/// Where a cluster keeps its files: the value of `--object-store`, parsed and checked once at start.
///
/// `s3://bucket/prefix?endpoint=http://host:port&region=us-east-1` (API.md, "Several nodes"): requests are
/// path-style (`endpoint/bucket/key`), signed for `region` (default `us-east-1`); without `endpoint` the AWS
/// endpoint of the region is used (`https://s3.<region>.amazonaws.com`). The endpoint never carries credentials
/// (they come from the environment, `ObjectStoreCredentials`), so `description` is safe to log.
///
/// Object keys (`key(jobID:filename:)`): `<prefix>/<job id>/<filename>`, or `<job id>/<filename>` without a
/// prefix. The job id keeps two jobs' files apart even when their filenames match, and the filename keeps the
/// bucket readable to an operator.
///
/// ```swift
/// let location = try ObjectStoreLocation(parsing: "s3://ferry/cache?endpoint=http://127.0.0.1:8333")
/// location.key(jobID: "j1", filename: "a.iso")   // "cache/j1/a.iso"
/// ```
public struct ObjectStoreLocation: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    /// Key prefix without leading or trailing slash; empty for the bucket's root.
    public let prefix: String
    /// `scheme://host[:port]`, no trailing slash.
    public let endpoint: String
    public let region: String

    /// Parses and checks an `s3://` location.
    /// - Throws: `ObjectStoreLocationError`, one line naming the wrong part (never echoing credentials).
    public init(parsing value: String) throws(ObjectStoreLocationError) {
        guard value.lowercased().hasPrefix("s3://") else {
            throw ObjectStoreLocationError("must start with s3:// (s3://bucket/prefix?endpoint=http://host:port&region=us-east-1)")
        }
        var rest = Substring(value.dropFirst(5))
        if rest.contains("#") { throw ObjectStoreLocationError("must not contain a fragment (#)") }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        guard !bucket.isEmpty else { throw ObjectStoreLocationError("has no bucket name (s3://bucket/prefix)") }
        guard Self.isValidBucket(bucket) else {
            throw ObjectStoreLocationError("bucket name \"\(bucket)\" is not valid (3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)")
        }
        let prefix = try Self.prefix(rest[slash...])
        var endpoint: String?
        var region: String?
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard let raw = parts.count == 2 ? parts[1] : nil, let decoded = Self.percentDecoded(raw), !decoded.isEmpty else {
                throw ObjectStoreLocationError("parameter \"\(name)\" needs a value")
            }
            switch name {
            case "endpoint" where endpoint == nil: endpoint = try Self.endpoint(decoded)
            case "region" where region == nil: region = decoded
            case "endpoint", "region": throw ObjectStoreLocationError("parameter \"\(name)\" is given twice")
            default: throw ObjectStoreLocationError("unknown parameter \"\(name)\" (known: endpoint, region)")
            }
        }
        let chosenRegion = region ?? "us-east-1"
        guard chosenRegion.utf8.allSatisfy({ Self.isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else {
            throw ObjectStoreLocationError("region \"\(chosenRegion)\" is not valid (lowercase letters, digits and hyphens, e.g. us-east-1)")
        }
        self.bucket = bucket
        self.prefix = prefix
        self.region = chosenRegion
        self.endpoint = endpoint ?? "https://s3.\(chosenRegion).amazonaws.com"
    }

    /// The object key of a job's file (see the type's note).
    public func key(jobID: String, filename: String) -> String {
        prefix.isEmpty ? "\(jobID)/\(filename)" : "\(prefix)/\(jobID)/\(filename)"
    }

    /// The copy of a stored part that other nodes may read while the job downloads (a fetch-through job's, whose
    /// clients may be on any node: the parts of an unfinished multipart upload cannot be read). A job's filename
    /// never starts with a dot, so this key is no file's.
    public func livePartKey(jobID: String, number: Int) -> String {
        keyPrefix(jobID: jobID) + ".live-part-\(number)"
    }

    /// What every key of the job's objects starts with.
    public func keyPrefix(jobID: String) -> String {
        prefix.isEmpty ? "\(jobID)/" : "\(prefix)/\(jobID)/"
    }

    /// The bucket's path-style URL, `endpoint/bucket`; what errors name.
    public var bucketURL: String { "\(endpoint)/\(bucket)" }

    /// The location in its canonical form, with the defaults filled in. It holds no secret.
    public var description: String {
        let path = prefix.isEmpty ? bucket : "\(bucket)/\(prefix)"
        return "s3://\(path)?endpoint=\(endpoint)&region=\(region)"
    }

    // MARK: parts

    /// S3's bucket naming rule (path-style requests also allow these only).
    static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last,
              isLowerAlphanumeric(first), isLowerAlphanumeric(last) else { return false }
        return bytes.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
            && !name.contains("..")
    }

    /// The path after the bucket: slashes at either end dropped; empty, `.` and `..` segments refused.
    private static func prefix(_ path: Substring) throws(ObjectStoreLocationError) -> String {
        let trimmed = path.drop(while: { $0 == "/" }).reversed().drop(while: { $0 == "/" }).reversed()
        let prefix = String(trimmed)
        guard !prefix.isEmpty else { return "" }
        for segment in prefix.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty, segment != ".", segment != ".." else {
                throw ObjectStoreLocationError("prefix \"\(prefix)\" has an empty, \".\" or \"..\" segment")
            }
        }
        guard percentDecoded(Substring(prefix)) == prefix, prefix.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
            throw ObjectStoreLocationError("prefix \"\(prefix)\" must not contain % escapes or control characters (write the key's characters as they are)")
        }
        return prefix
    }

    /// `http(s)://host[:port]` with nothing after it but an optional `/`.
    private static func endpoint(_ value: String) throws(ObjectStoreLocationError) -> String {
        let lowered = value.lowercased()
        guard let scheme = ["http", "https"].first(where: { lowered.hasPrefix($0 + "://") }) else {
            throw ObjectStoreLocationError("endpoint must start with http:// or https://")
        }
        var authority = Substring(value.dropFirst(scheme.count + 3))
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains("@") else {
            throw ObjectStoreLocationError("endpoint must not carry credentials (user:password@); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        guard !authority.contains("/"), !authority.contains("?") else {
            throw ObjectStoreLocationError("endpoint \(scheme)://\(authority) must be only scheme, host and port (requests are path-style: the bucket goes in the s3:// part)")
        }
        var host = authority
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ObjectStoreLocationError("endpoint host \(authority) has no closing ]") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ObjectStoreLocationError("endpoint \(authority) has text after the host") }
                port = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            throw ObjectStoreLocationError("endpoint \(scheme)://\(authority) has no valid host")
        }
        if let port {
            guard let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isASCII) else {
                throw ObjectStoreLocationError("endpoint port \"\(port)\" is not a number from 1 to 65535")
            }
        }
        return "\(scheme)://\(authority)"
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Decodes `%XX` escapes; nil when an escape is broken or the result is not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard iterator.count >= 2, let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            iterator = iterator.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Why an `--object-store` value or the credentials for it were refused: one line, no secret in it.
public struct ObjectStoreLocationError: Error, Equatable, CustomStringConvertible, Sendable {
    public let message: String

    init(_ message: String) { self.message = message }

    public var description: String { "object store: \(message)" }
}
