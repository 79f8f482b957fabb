import FerryCore

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
}
