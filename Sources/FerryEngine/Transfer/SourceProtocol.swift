import FerryCore
import Foundation

/// How the engine speaks to a job's source, chosen once by its URL's scheme: which libcurl protocols a transfer
/// may use (set per transfer, so a redirect can never lead elsewhere), how the file is described (an HTTP response
/// head, or a size and a modification time libcurl reads from an FTP or SFTP server), and whether it may be split.
///
/// Pure. `DownloadEngine+Fetches` sets libcurl's options from it; `Exchange` judges answers by its `dialect`.
enum SourceProtocol: Equatable, Sendable {
    case http
    /// Plain FTP, passive mode.
    case ftp
    /// FTP with TLS required on the control and data connections, negotiated with `AUTH TLS` (explicit FTPS,
    /// RFC 4217). libcurl's own `ftps://` means implicit TLS on port 990, which Ferry does not offer.
    case ftps
    /// SFTP (libcurl's libssh2), host keys checked against the known-hosts file.
    case sftp

    init(scheme: String) {
        switch scheme {
        case "ftp": self = .ftp
        case "ftps": self = .ftps
        case "sftp": self = .sftp
        default: self = .http
        }
    }

    /// `CURLOPT_PROTOCOLS_STR`: the only protocols the transfer may speak. `CURLOPT_REDIR_PROTOCOLS_STR` is
    /// always "http,https" (an HTTP redirect never leads to ftp, sftp or file; the others do not redirect).
    var curlProtocols: String {
        switch self {
        case .http: return "http,https"
        case .ftp, .ftps: return "ftp"
        case .sftp: return "sftp"
        }
    }

    /// How the server describes the file.
    var dialect: Exchange.Dialect { self == .http ? .http : .byteOffset }

    /// Whether a file may be split over several connections. FTP and SFTP are kept to one: libcurl reads an FTP
    /// range by closing the data connection early (many servers then log an error and some refuse the next
    /// login), and neither protocol has a validator libcurl checks per request, as `If-Range` is for HTTP.
    var allowsSegments: Bool { self == .http }

    /// The URL handed to libcurl: `ftps://` is written `ftp://` (TLS is required by `CURLOPT_USE_SSL`, not by an
    /// implicit-TLS port).
    func curlURL(_ url: String) -> String {
        guard self == .ftps, url.hasPrefix("ftps://") else { return url }
        return "ftp://" + url.dropFirst("ftps://".count)
    }

    /// The `CURLOPT_PREQUOTE` command asking an FTP server for the file's size itself, for a download from byte 0:
    /// `*SIZE <name>` (the `*` lets the server refuse it). libcurl then reads the file until its data connection
    /// closes (`CURLOPT_IGNORE_CONTENT_LENGTH`) instead of stopping at the size `SIZE` gave, so a server whose size
    /// understates the file is caught (`Exchange`). The command is sent after libcurl's `CWD`s into the URL's
    /// directories (its default `CURLFTPMETHOD_MULTICWD`), so it names the last path segment, percent-decoded and
    /// without a `;type=` suffix. Nil for SFTP and HTTP, for a URL naming a directory, and for a name that cannot be
    /// written on a command line (a CR, LF or NUL, or bytes that are not UTF-8): libcurl's own `SIZE` is used then.
    func sizeCommand(url: String) -> String? {
        guard self == .ftp || self == .ftps, let path = URLComponents(string: url)?.percentEncodedPath else { return nil }
        var segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        if let type = segment.range(of: ";type=", options: [.caseInsensitive, .backwards]) { segment = String(segment[..<type.lowerBound]) }
        guard let name = segment.removingPercentEncoding, !name.isEmpty,
              // Scalars, not Characters: "\r\n" is one Character, equal neither to "\r" nor to "\n".
              !name.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\u{0}" }) else { return nil }
        return "*SIZE " + name
    }
}
