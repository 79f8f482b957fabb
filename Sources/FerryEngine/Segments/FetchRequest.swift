/// What one exchange of a fetch asks for (pure): the request its `Exchange` judges the answer by, the header lines
/// sent, and the offset FTP and SFTP resume from. `DownloadEngine+Fetches` builds one per exchange on the engine
/// queue; `FetchHandleOptions` puts it on the libcurl handle.
///
/// - FTP and SFTP (`Exchange.Dialect.byteOffset`) ask for the rest of the file from the fetch's position
///   (`CURLOPT_RESUME_FROM_LARGE` past 0, judged by the size the server reports), without header lines.
/// - A split download's fetch asks for the rest of its segment: `Range: bytes=a-(b-1)` with the run's `If-Range`.
/// - Otherwise the rest of the file: nothing more from 0; `Range: bytes=N-` past it, with `If-Range` when the file
///   has a validator to resume under.
struct FetchRequest: Equatable {
    let request: Exchange.Request
    /// The spec's own header lines, then `Range` and `If-Range`.
    let headerLines: [String]
    /// Where FTP and SFTP resume (nil from byte 0 and over HTTP).
    let resumeFrom: Int64?

    /// - Parameters:
    ///   - position: where the fetch goes on; `segmentEnd`: the end of its segment.
    ///   - splitValidator: the run's `If-Range` validator once the file is split (nil while it is not).
    ///   - resumeValidator: the transfer's `If-Range` validator, for the rest of the file past 0.
    ///   - headerLines: the spec's header lines (`RequestHeaderFilter.lines`).
    init(dialect: Exchange.Dialect, position: Int64, segmentEnd: Int64, splitValidator: String?, resumeValidator: String?,
         headerLines: [String]) {
        var lines = headerLines
        resumeFrom = dialect == .byteOffset && position > 0 ? position : nil
        if dialect == .byteOffset {
            request = .rest(from: position)
            lines = []
        } else if let splitValidator {
            request = .range(position..<segmentEnd)
            lines.append("Range: bytes=\(position)-\(segmentEnd - 1)")
            lines.append("If-Range: \(splitValidator)")
        } else {
            request = .rest(from: position)
            if position > 0 {
                lines.append("Range: bytes=\(position)-")
                if let resumeValidator { lines.append("If-Range: \(resumeValidator)") }
            }
        }
        self.headerLines = lines
    }
}
