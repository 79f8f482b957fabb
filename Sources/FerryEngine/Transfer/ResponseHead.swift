import FerryCore
import Foundation

/// The status and header fields of one HTTP response, built from libcurl's header callback line by line.
///
/// Pure value. A transfer starts a fresh head at every status line, so redirects and `100 Continue` responses
/// never leak fields into the final response.
struct ResponseHead: Equatable, Sendable {
    var status: Int
    /// Field values by lowercased name; the first occurrence wins.
    private(set) var fields: [String: String] = [:]

    init(status: Int) { self.status = status }

    /// The status code of a status line ("HTTP/1.1 206 Partial Content", "HTTP/2 200"), or nil if it is not one.
    static func status(ofStatusLine line: String) -> Int? {
        guard line.hasPrefix("HTTP/") else { return nil }
        let parts = line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].count == 3, let code = Int(parts[1]) else { return nil }
        return code
    }

    /// True for the empty line that ends a header block.
    static func isEndOfHeaders(_ line: String) -> Bool { line == "\r\n" || line == "\n" || line.isEmpty }

    /// Adds one "Name: value" line (obsolete line folding is ignored; libcurl unfolds nothing, origins rarely fold).
    mutating func add(line: String) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, fields[name] == nil else { return }
        fields[name] = value
    }

    subscript(name: String) -> String? { fields[name.lowercased()] }

    /// 1xx: another head follows.
    var isInterim: Bool { (100..<200).contains(status) }

    /// A redirect libcurl follows (it has a Location).
    var isFollowedRedirect: Bool { [301, 302, 303, 307, 308].contains(status) && self["location"] != nil }

    var contentLength: Int64? { self["content-length"].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil } }
    var contentRange: String? { self["content-range"] }
    var contentType: String? { self["content-type"] }
    var contentDisposition: String? { self["content-disposition"] }
    var etag: String? { self["etag"] }
    var lastModified: String? { self["last-modified"] }

    /// `Accept-Ranges` lists `bytes`: the origin says it serves byte ranges.
    var acceptsByteRanges: Bool {
        guard let value = self["accept-ranges"] else { return false }
        return value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" }
    }

    /// Retry-After in seconds from `now`: delta-seconds or an HTTP date (never negative).
    func retryAfter(now: Date) -> Double? {
        guard let value = self["retry-after"] else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? Double(seconds) : nil }
        guard let date = HTTPDate.parse(value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
