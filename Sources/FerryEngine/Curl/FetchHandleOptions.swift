import CCurl
import FerryCore

/// Makes the libcurl handle of one exchange of a download: the options every request of a transfer shares (URL,
/// protocols, redirects, timeouts, buffer, limits, proxy), those of its source's protocol, and those of the
/// exchange (`FetchRequest`). It holds only settings; the engine queue calls it in `launch` and sets the handle's
/// callbacks before adding it to the multi.
struct FetchHandleOptions {
    let configuration: EngineConfiguration

    /// A new handle for `request` of `source` at `url`, or the error that left none (the handle is cleaned up).
    /// - Parameters:
    ///   - pins: the transfer's checked destinations, for a proxy (`CurlEasy.route(through:pins:)`).
    ///   - receiveBuffer: `CURLOPT_BUFFERSIZE` (`DownloadEngine.receiveBufferSize(for:)`).
    ///   - split: the run is split: HTTP/1.1, so that each range is a TCP connection of its own (HTTP/2 would
    ///     multiplex them onto one, defeating the point: origins and networks limit speed per connection).
    ///   - sizeCommand: the FTP `SIZE` command Ferry sends itself (`SourceProtocol.sizeCommand`).
    func handle(_ request: FetchRequest, source: SourceProtocol, url: String, pins: [DestinationPin], receiveBuffer: Int,
                split: Bool, sizeCommand: String?) throws(CurlError) -> CurlEasy {
        let easy = try CurlEasy()
        do {
            try shared(easy, source: source, url: url, pins: pins, receiveBuffer: receiveBuffer)
            if split { try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)) }
            try easy.setHeaders(request.headerLines)
            if let offset = request.resumeFrom { try easy.set(CURLOPT_RESUME_FROM_LARGE, offset: offset) }
            if let sizeCommand {
                // libcurl reads to the data connection's end, so a size that understates the file is seen.
                try easy.set(CURLOPT_IGNORE_CONTENT_LENGTH, 1)
                try easy.setPrequote([sizeCommand])
            }
        } catch {
            easy.cleanup()
            throw error
        }
        return easy
    }

    /// The options every request of a transfer shares, and those of its source's protocol.
    private func shared(_ easy: CurlEasy, source: SourceProtocol, url: String, pins: [DestinationPin],
                        receiveBuffer: Int) throws(CurlError) {
        let c = configuration
        try easy.set(CURLOPT_URL, source.curlURL(url))
        // Limited per transfer: an http redirect never leads to ftp, sftp or file.
        try easy.set(CURLOPT_PROTOCOLS_STR, source.curlProtocols)
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try configureProtocol(easy, source)
        try easy.set(CURLOPT_FOLLOWLOCATION, 1)
        try easy.set(CURLOPT_MAXREDIRS, c.maxRedirects)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(c.connectTimeout * 1000))
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, c.lowSpeedLimit)
        try easy.set(CURLOPT_LOW_SPEED_TIME, c.lowSpeedTime)
        // 512 KiB by default (see `receiveBufferSize` for the measurement); smaller under a speed limit.
        try easy.set(CURLOPT_BUFFERSIZE, receiveBuffer)
        try easy.set(CURLOPT_HTTP_VERSION, ferry_http_version_2tls())
        try easy.set(CURLOPT_USERAGENT, c.userAgent)
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        // Never a proxy from `http_proxy`/`https_proxy`/`ALL_PROXY`: the destination guard would see only the proxy's
        // address while the proxy fetched whatever name it was given. `--proxy` is used with pinned destinations.
        if let proxy = c.proxy {
            try easy.route(through: proxy, pins: pins)
        } else {
            try easy.set(CURLOPT_PROXY, "")
        }
        if let max = c.maxFileSize { try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: max) }
    }

    /// The options of FTP and SFTP. Passive FTP connects its data connection to the control connection's address
    /// (`CURLOPT_FTP_SKIP_PASV_IP`: a PASV reply naming another address is ignored; EPSV names only a port), and the
    /// open-socket callback checks that connection too. SFTP logs in with the URL's password or the service
    /// user's key (`~/.ssh/id_rsa`, libcurl's default), after the host key is found in `sshKnownHosts`.
    private func configureProtocol(_ easy: CurlEasy, _ source: SourceProtocol) throws(CurlError) {
        switch source {
        case .http:
            return
        case .ftp, .ftps:
            try easy.set(CURLOPT_FTP_SKIP_PASV_IP, 1)
            try easy.set(CURLOPT_FILETIME, 1)
            if source == .ftps { try easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
        case .sftp:
            try easy.set(CURLOPT_FILETIME, 1)
            try easy.set(CURLOPT_SSH_AUTH_TYPES, ferry_ssh_auth_password_publickey())
            try easy.checkHostKeys(knownHosts: configuration.sshKnownHosts)
        }
    }
}
