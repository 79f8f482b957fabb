import CCurl
import Dispatch
import Foundation

/// One libcurl easy handle and the callbacks of one HTTP exchange.
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
    private var multi: CurlMulti?
    /// libcurl's detailed message for the last failure (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// Each response header line, status line and the empty line ending a header block. False aborts.
    var onHeaderLine: ((String) -> Bool)?
    /// Each body chunk.
    var onBody: ((UnsafeRawBufferPointer) -> BodyDisposition)?
    /// The address libcurl is about to connect to (4 or 16 bytes; empty for other families). False refuses it.
    var onConnect: (([UInt8]) -> Bool)?

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

    /// Request header lines ("Name: value"), kept alive until `cleanup()`.
    func setHeaders(_ lines: [String]) throws(CurlError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        try check(ferry_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
    }

    /// CURLINFO_EFFECTIVE_URL: the URL of the last request, after redirects.
    var effectiveURL: String? {
        var pointer: UnsafePointer<CChar>?
        guard ferry_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else { return nil }
        return String(cString: pointer)
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
        curl_easy_cleanup(handle)
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
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

    private static let closeSocketCallback: curl_closesocket_callback = { clientp, socket in
        guard let clientp else { return Foundation.close(socket) }
        Unmanaged<CurlMulti>.fromOpaque(clientp).takeUnretainedValue().closeSocket(socket)
        return 0
    }
}
