import CCurl
import Dispatch
import FerryCore
import Foundation

/// One libcurl easy handle and the callbacks of one exchange (HTTP, FTP or SFTP).
///
/// Confined to the engine queue (the queue of the `CurlMulti` it is added to); libcurl calls its callbacks there,
/// inside `curl_multi_socket_action`. The closures are cleared by `cleanup()`, which breaks the reference cycle
/// with the transfer that installed them.
final class CurlEasy: @unchecked Sendable {
    /// What the body callback did with a chunk.
    enum BodyDisposition {
        case consumed
        /// Not consumed: libcurl keeps it and delivers it again after `CurlMulti.unpause`.
        case pause
        /// Stop the transfer (libcurl reports `CURLE_WRITE_ERROR`); the caller remembers why.
        case abort
    }

    let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// `CURLOPT_CONNECT_TO` entries (`setConnectTo`), kept alive until `cleanup()`.
    private var connectToList: UnsafeMutablePointer<curl_slist>?
    /// `CURLOPT_PREQUOTE` commands (`setPrequote`), kept alive until `cleanup()`.
    private var prequoteList: UnsafeMutablePointer<curl_slist>?
    private var multi: CurlMulti?
    /// libcurl's detailed message for the last failure (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// Each response header line, status line and the empty line ending a header block. False aborts.
    var onHeaderLine: ((String) -> Bool)?
    /// Each body chunk.
    var onBody: ((UnsafeRawBufferPointer) -> BodyDisposition)?
    /// The address libcurl is about to connect to (4 or 16 bytes; empty for other families). False refuses it.
    var onConnect: (([UInt8]) -> Bool)?
    /// An SFTP server's host key, as checked against the known-hosts file. False rejects it.
    var onHostKey: ((HostKeyMatch) -> Bool)?
    /// What an upload sends next (the request body, or a multipart's file part): fill the buffer.
    var onRead: ((UnsafeMutableRawBufferPointer) -> ReadDisposition)?
    private var mime: OpaquePointer?

    /// How an SFTP server's host key compares with the known-hosts file (`CURLOPT_SSH_KEYFUNCTION`'s match).
    enum HostKeyMatch: Equatable {
        case known
        /// No key for this host and port in the file.
        case unknown
        /// The file holds another key for this host and port.
        case changed
    }

    /// What the read callback did with libcurl's buffer.
    enum ReadDisposition {
        /// This many bytes were put in (0: the body is complete).
        case filled(Int)
        /// Nothing now: libcurl asks again after `CurlMulti.unpause`.
        case pause
        /// Stop the transfer (`CURLE_ABORTED_BY_CALLBACK`); the caller remembers why.
        case abort
    }

    init() throws(CurlError) {
        guard let handle = curl_easy_init() else { throw CurlError(easy: CURLE_FAILED_INIT, call: "curl_easy_init") }
        self.handle = handle
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_PRIVATE, me), "CURLOPT_PRIVATE")
        try check(ferry_easy_setopt_write_cb(handle, CURLOPT_WRITEFUNCTION, Self.writeCallback), "CURLOPT_WRITEFUNCTION")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA")
        try check(ferry_easy_setopt_write_cb(handle, CURLOPT_HEADERFUNCTION, Self.headerCallback), "CURLOPT_HEADERFUNCTION")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA")
        try check(ferry_easy_setopt_opensocket_cb(handle, Self.openSocketCallback), "CURLOPT_OPENSOCKETFUNCTION")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_OPENSOCKETDATA, me), "CURLOPT_OPENSOCKETDATA")
        try check(ferry_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
    }

    deinit { errorBuffer.deallocate() }

    /// libcurl's detailed message for the failure, or "" when it wrote none.
    var errorDetail: String { String(cString: errorBuffer) }

    /// Installs the close-socket callback pointing at the multi (connections outlive this handle in its cache).
    func setSocketCallbacks(multi pointer: UnsafeMutableRawPointer) {
        multi = Unmanaged<CurlMulti>.fromOpaque(pointer).takeUnretainedValue()
        _ = ferry_easy_setopt_closesocket_cb(handle, Self.closeSocketCallback)
        _ = ferry_easy_setopt_ptr(handle, CURLOPT_CLOSESOCKETDATA, pointer)
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try check(ferry_easy_setopt_long(handle, option, value), Self.name(option))
    }

    func set(_ option: CURLoption, offset value: Int64) throws(CurlError) {
        try check(ferry_easy_setopt_off(handle, option, curl_off_t(value)), Self.name(option))
    }

    /// libcurl copies string options.
    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        try check(ferry_easy_setopt_string(handle, option, value), Self.name(option))
    }

    /// Checks SFTP host keys against the known-hosts file at `path` (`CURLOPT_SSH_KNOWNHOSTS`), asking `onHostKey`
    /// about every key: libcurl never adds one to the file.
    func checkHostKeys(knownHosts path: String) throws(CurlError) {
        try set(CURLOPT_SSH_KNOWNHOSTS, path)
        try check(ferry_easy_setopt_sshkey_cb(handle, Self.hostKeyCallback), "CURLOPT_SSH_KEYFUNCTION")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_SSH_KEYDATA, Unmanaged.passUnretained(self).toOpaque()), "CURLOPT_SSH_KEYDATA")
    }

    /// Request header lines ("Name: value"), kept alive until `cleanup()`.
    func setHeaders(_ lines: [String]) throws(CurlError) {
        headerList = try setList(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", lines, replacing: headerList)
    }

    /// `CURLOPT_CONNECT_TO` entries (`HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`), kept alive until `cleanup()`.
    func setConnectTo(_ entries: [String]) throws(CurlError) {
        connectToList = try setList(CURLOPT_CONNECT_TO, "CURLOPT_CONNECT_TO", entries, replacing: connectToList)
    }

    /// FTP commands sent after `TYPE`, right before `RETR` (`CURLOPT_PREQUOTE`), kept alive until `cleanup()`. A
    /// command starting with `*` may be refused by the server without failing the transfer.
    func setPrequote(_ commands: [String]) throws(CurlError) {
        prequoteList = try setList(CURLOPT_PREQUOTE, "CURLOPT_PREQUOTE", commands, replacing: prequoteList)
    }

    /// Sets the string-list `option` to `items` and frees `previous` (the list set before); returns the new list,
    /// which libcurl reads until it is replaced or the handle cleaned up. When the option is refused, `previous`
    /// stays.
    private func setList(_ option: CURLoption, _ name: String, _ items: [String],
                         replacing previous: UnsafeMutablePointer<curl_slist>?) throws(CurlError) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for item in items { list = curl_slist_append(list, item) }
        try check(ferry_easy_setopt_slist(handle, option, list), name)
        if let previous { curl_slist_free_all(previous) }
        return list
    }

    /// Makes the request an upload of `size` bytes that `onRead` provides: with `CURLOPT_UPLOAD` (a PUT).
    func setUpload(size: Int64) throws(CurlError) {
        try check(ferry_easy_setopt_read_cb(handle, Self.readCallback), "CURLOPT_READFUNCTION")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_READDATA, Unmanaged.passUnretained(self).toOpaque()), "CURLOPT_READDATA")
        try set(CURLOPT_UPLOAD, 1)
        try set(CURLOPT_INFILESIZE_LARGE, offset: size)
    }

    /// Makes the request a `multipart/form-data` POST: the text `fields` in order, then the file part named
    /// `field` (`size` bytes that `onRead` provides), kept alive until `cleanup()`.
    func setMultipart(fields: [(name: String, value: String)], field: String, filename: String, contentType: String?, size: Int64) throws(CurlError) {
        guard let mime = curl_mime_init(handle) else { throw CurlError(easy: CURLE_OUT_OF_MEMORY, call: "curl_mime_init") }
        if let old = self.mime { curl_mime_free(old) }
        self.mime = mime
        for (name, value) in fields {
            guard let part = curl_mime_addpart(mime) else { throw CurlError(easy: CURLE_OUT_OF_MEMORY, call: "curl_mime_addpart") }
            try check(curl_mime_name(part, name), "curl_mime_name")
            try check(ferry_mime_data_string(part, value), "curl_mime_data")
        }
        guard let part = curl_mime_addpart(mime) else { throw CurlError(easy: CURLE_OUT_OF_MEMORY, call: "curl_mime_addpart") }
        try check(curl_mime_name(part, field), "curl_mime_name")
        try check(curl_mime_filename(part, filename), "curl_mime_filename")
        try check(curl_mime_type(part, contentType ?? "application/octet-stream"), "curl_mime_type")
        try check(curl_mime_data_cb(part, curl_off_t(size), Self.readCallback, Self.seekCallback, nil,
                                    Unmanaged.passUnretained(self).toOpaque()), "curl_mime_data_cb")
        try check(ferry_easy_setopt_ptr(handle, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(mime)), "CURLOPT_MIMEPOST")
    }

    /// CURLINFO_EFFECTIVE_URL: the URL of the last request, after redirects.
    var effectiveURL: String? {
        var pointer: UnsafePointer<CChar>?
        guard ferry_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
    }

    /// CURLINFO_CONTENT_LENGTH_DOWNLOAD_T: the bytes the server said it sends (for FTP and SFTP: from the offset
    /// asked for); nil when unknown.
    var contentLength: Int64? {
        var value: curl_off_t = -1
        guard ferry_easy_getinfo_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &value) == CURLE_OK, value >= 0 else { return nil }
        return Int64(value)
    }

    /// CURLINFO_FILETIME_T (with `CURLOPT_FILETIME`): the remote file's modification time, seconds since 1970; nil
    /// when unknown.
    var fileTime: Int? {
        var value: curl_off_t = -1
        guard ferry_easy_getinfo_off(handle, CURLINFO_FILETIME_T, &value) == CURLE_OK, value >= 0 else { return nil }
        return Int(value)
    }

    /// CURLINFO_RESPONSE_CODE of the last response.
    var responseCode: Int {
        var code = 0
        _ = ferry_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Frees the handle and the header list and drops the callbacks. The handle must not be in a multi.
    func cleanup() {
        onHeaderLine = nil
        onBody = nil
        onConnect = nil
        onRead = nil
        onHostKey = nil
        curl_easy_cleanup(handle)
        if let mime { curl_mime_free(mime) }
        mime = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if let connectToList { curl_slist_free_all(connectToList) }
        connectToList = nil
        if let prequoteList { curl_slist_free_all(prequoteList) }
        prequoteList = nil
    }

    private func check(_ code: CURLcode, _ call: String) throws(CurlError) {
        guard code == CURLE_OK else { throw CurlError(easy: code, call: "curl_easy_setopt(\(call))") }
    }

    private static func name(_ option: CURLoption) -> String {
        guard let info = curl_easy_option_by_id(option), let name = info.pointee.name else { return "option \(option.rawValue)" }
        return "CURLOPT_" + String(cString: name)
    }

    // MARK: C callbacks

    private static func easy(_ pointer: UnsafeMutableRawPointer?) -> CurlEasy? {
        pointer.map { Unmanaged<CurlEasy>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let writeCallback: curl_write_callback = { data, size, count, userdata in
        let length = size * count
        guard let easy = easy(userdata), let onBody = easy.onBody else { return 0 }
        switch onBody(UnsafeRawBufferPointer(start: data, count: length)) {
        case .consumed: return length
        case .pause: return ferry_writefunc_pause()
        case .abort: return 0
        }
    }

    private static let readCallback: curl_read_callback = { buffer, size, count, userdata in
        guard let easy = easy(userdata), let onRead = easy.onRead, let buffer else { return ferry_readfunc_abort() }
        switch onRead(UnsafeMutableRawBufferPointer(start: buffer, count: size * count)) {
        case .filled(let bytes): return bytes
        case .pause: return ferry_readfunc_pause()
        case .abort: return ferry_readfunc_abort()
        }
    }

    /// The body is read once, front to back: libcurl may not rewind it (a redirect or an auth round would need to).
    private static let seekCallback: curl_seek_callback = { _, _, _ in ferry_seekfunc_cantseek() }

    private static let headerCallback: curl_write_callback = { data, size, count, userdata in
        let length = size * count
        guard let easy = easy(userdata), let onHeaderLine = easy.onHeaderLine, let data else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        let line = String(decoding: bytes, as: UTF8.self)
        return onHeaderLine(line) ? length : 0
    }

    private static let openSocketCallback: curl_opensocket_callback = { clientp, _, address in
        guard let easy = easy(clientp), let address else { return ferry_socket_bad() }
        let family = address.pointee.family
        var bytes: [UInt8] = []
        withUnsafePointer(to: &address.pointee.addr) { pointer in
            let raw = UnsafeRawPointer(pointer)
            if family == AF_INET {
                let sin = raw.assumingMemoryBound(to: sockaddr_in.self).pointee
                bytes = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            } else if family == AF_INET6 {
                let sin6 = raw.assumingMemoryBound(to: sockaddr_in6.self).pointee
                bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            }
        }
        if let onConnect = easy.onConnect, !onConnect(bytes) { return ferry_socket_bad() }
        let fd = socket(family, address.pointee.socktype, address.pointee.protocol)
        guard fd >= 0 else { return ferry_socket_bad() }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        easy.multi?.socketOpened(fd)
        return fd
    }

    private static let hostKeyCallback: curl_sshkeycallback = { _, _, _, match, clientp in
        let reject = Int32(CURLKHSTAT_REJECT.rawValue)
        guard let easy = easy(clientp), let onHostKey = easy.onHostKey else { return reject }
        let verdict: HostKeyMatch
        switch match {
        case CURLKHMATCH_OK: verdict = .known
        case CURLKHMATCH_MISMATCH: verdict = .changed
        default: verdict = .unknown
        }
        return onHostKey(verdict) ? Int32(CURLKHSTAT_FINE.rawValue) : reject
    }

    private static let closeSocketCallback: curl_closesocket_callback = { clientp, socket in
        guard let clientp else { return Foundation.close(socket) }
        Unmanaged<CurlMulti>.fromOpaque(clientp).takeUnretainedValue().closeSocket(socket)
        return 0
    }
}

extension Exchange.ServerReport {
    /// What an FTP or SFTP server said of the file, as libcurl read it (nothing without a handle).
    init(_ easy: CurlEasy?) {
        self.init(remaining: easy?.contentLength, modified: easy?.fileTime.map { HTTPDate.format(secondsSince1970: $0) })
    }
}
