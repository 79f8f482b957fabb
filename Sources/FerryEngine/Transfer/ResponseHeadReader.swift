/// Gathers one exchange's response head from libcurl's header lines, for every kind of exchange (a whole file, a
/// resume, a segment): interim (1xx) heads and the redirects libcurl follows are skipped, and the final response's
/// head is handed out once, at its end. Pure.
struct ResponseHeadReader: Sendable {
    /// The head being read, or the final one once read (nil before the first status line).
    private(set) var head: ResponseHead?

    /// Feeds one header line as libcurl delivers it (with its line end); returns the final response's head when
    /// this line ends it.
    mutating func read(_ line: String) -> ResponseHead? {
        if let status = ResponseHead.status(ofStatusLine: line) {
            head = ResponseHead(status: status)
            return nil
        }
        guard var current = head else { return nil }
        if ResponseHead.isEndOfHeaders(line) {
            return current.isInterim || current.isFollowedRedirect ? nil : current
        }
        current.add(line: line)
        head = current
        return nil
    }
}
