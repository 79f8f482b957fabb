/// The head of the final response to an object-store request, fed line by line from libcurl's header callback.
/// A new status line (after a `100 Continue`) starts over. Pure.
struct ObjectStoreResponseHead: Equatable {
    private(set) var status = 0
    /// Header values by lowercased name; a repeated header keeps its last value.
    private(set) var fields: [String: String] = [:]

    mutating func read(_ line: String) {
        let trimmed = S3XMLElement.trimmed(line)
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            fields = [:]
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = trimmed[..<colon].lowercased()
        fields[name] = S3XMLElement.trimmed(String(trimmed[trimmed.index(after: colon)...]))
    }

    /// What the head says about the object: size (the whole object's, also for a `206`), ETag, type, metadata.
    var object: ObjectInfo {
        var size = fields["content-length"].flatMap { Int64($0) } ?? 0
        if status == 206, let total = fields["content-range"]?.split(separator: "/").last.flatMap({ Int64($0) }) {
            size = total
        }
        var metadata: [String: String] = [:]
        for (name, value) in fields where name.hasPrefix("x-amz-meta-") {
            metadata[String(name.dropFirst("x-amz-meta-".count))] = value
        }
        return ObjectInfo(size: size, etag: fields["etag"] ?? "", contentType: fields["content-type"],
                          lastModified: fields["last-modified"], metadata: metadata)
    }
}

/// What `HeadObject` and `GetObject` tell about an object.
public struct ObjectInfo: Equatable, Sendable {
    /// The whole object's size in bytes.
    public let size: Int64
    /// The store's ETag, quotes included.
    public let etag: String
    public let contentType: String?
    /// The `Last-Modified` header as sent.
    public let lastModified: String?
    /// `x-amz-meta-*` values by their lowercased name without the prefix (`sha256`).
    public let metadata: [String: String]
}
