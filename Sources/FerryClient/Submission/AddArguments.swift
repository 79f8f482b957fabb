import Foundation

/// `ferry add`'s arguments, turned into a `Submission`. Pure.
///
/// `--filename` and `--sha256` describe one file, so they are refused with several URLs; `--priority`,
/// `--max-speed`, `--connections`, `--paused`, `--header` and `--tag` apply to every URL. `--connections` (1-16) and
/// the speed limit (above 0) are checked here, before any request; priority bounds are the server's: its
/// `invalid_request` message is shown as is.
public struct AddArguments: Sendable, Equatable {
    /// The range of `connections` the API accepts (API.md, `POST /api/v1/jobs`).
    public static let connectionRange = 1...16

    public var urls: [String]
    public var filename: String?
    public var sha256: String?
    public var priority: Int?
    /// `--max-speed`, already turned into bytes per second.
    public var maxBytesPerSecond: Int64?
    public var connections: Int?
    public var paused: Bool
    /// `Name: value` lines as typed.
    public var headers: [String]
    /// `--tag`s in the order given; the server checks them (at most 16, 1 to 64 characters each).
    public var tags: [String]

    public init(urls: [String], filename: String? = nil, sha256: String? = nil, priority: Int? = nil,
                maxBytesPerSecond: Int64? = nil, connections: Int? = nil, paused: Bool = false,
                headers: [String] = [], tags: [String] = []) {
        self.urls = urls
        self.filename = filename
        self.sha256 = sha256
        self.priority = priority
        self.maxBytesPerSecond = maxBytesPerSecond
        self.connections = connections
        self.paused = paused
        self.headers = headers
        self.tags = tags
    }

    public func submission() throws(ClientError) -> Submission {
        guard !urls.isEmpty else { throw .usage("give at least one URL") }
        if urls.count > 1 {
            if filename != nil { throw .usage("--filename names one file: give a single URL with it") }
            if sha256 != nil { throw .usage("--sha256 checks one file: give a single URL with it") }
        }
        if let sha256 {
            guard sha256.count == 64, sha256.allSatisfy(\.isHexDigit) else {
                throw .usage("--sha256 must be 64 hexadecimal digits (got '\(sha256)')")
            }
        }
        if let connections, !Self.connectionRange.contains(connections) {
            throw .usage("--connections must be from \(Self.connectionRange.lowerBound) to "
                + "\(Self.connectionRange.upperBound) (got \(connections))")
        }
        if let maxBytesPerSecond, maxBytesPerSecond < 1 {
            throw .usage("--max-speed must be at least 1 byte per second (got \(maxBytesPerSecond))")
        }
        let parsedHeaders = try Self.parseHeaders(headers)
        let items = urls.map { url in
            JobSubmission(url: url, filename: filename, headers: parsedHeaders, sha256: sha256?.lowercased(),
                          priority: priority, maxBytesPerSecond: maxBytesPerSecond, connections: connections,
                          paused: paused ? true : nil, tags: tags.isEmpty ? nil : tags)
        }
        return items.count == 1 ? .single(items[0]) : .batch(items)
    }

    /// `["Name: value", …]` → `["Name": "value"]`; nil for none.
    /// - Throws: `.usage` for a line without a colon or a name, or a name given twice (names are case-insensitive).
    public static func parseHeaders(_ lines: [String]) throws(ClientError) -> [String: String]? {
        guard !lines.isEmpty else { return nil }
        var headers: [String: String] = [:]
        var seen: Set<String> = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw .usage("--header must look like 'Name: value' (got '\(line)')")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.contains(" ") else {
                throw .usage("--header must look like 'Name: value' (got '\(line)')")
            }
            guard seen.insert(name.lowercased()).inserted else {
                throw .usage("--header '\(name)' is given twice")
            }
            headers[name] = value
        }
        return headers
    }
}
