import Foundation

/// Reads the reply to the `*SIZE` command Ferry sends before `RETR` (`SourceProtocol.sizeCommand`) from an FTP
/// server's control replies, which libcurl hands to the header callback one line at a time.
///
/// The command is the last one before `RETR` (`CURLOPT_PREQUOTE`), so its reply is the one just before `RETR`'s
/// preliminary `125` or `150`; taking that one, and not merely a `213`, keeps `MDTM`'s `213 YYYYMMDDHHMMSS`
/// (sent earlier for `CURLOPT_FILETIME`) from being read as a size. A refused `SIZE` (`550`) gives no size. Lines
/// after that first preliminary reply change nothing. Pure.
struct QuotedSizeReply: Equatable, Sendable {
    /// The last reply's final line ("ddd text"), before the preliminary reply to `RETR`.
    private var last: String?
    private var ended = false
    /// The size the server gave, once `RETR`'s preliminary reply arrived after a `213 N`.
    private(set) var size: Int64?

    /// Feeds one control reply line (with or without its CRLF).
    mutating func read(_ line: String) {
        guard !ended else { return }
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        let characters = Array(text.utf8)
        // Only a reply's final line: three digits and a space (a continuation line has a hyphen, or no code).
        guard characters.count >= 4, characters[0..<3].allSatisfy({ (48...57).contains($0) }), characters[3] == 32 else { return }
        guard characters[0] == 49 else {  // not 1xx
            last = text
            return
        }
        ended = true
        guard let last, last.hasPrefix("213 ") else { return }
        let value = last.dropFirst(4).trimmingCharacters(in: .whitespaces)
        guard let size = Int64(value), size >= 0 else { return }
        self.size = size
    }
}
