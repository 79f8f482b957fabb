import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// Serves the files under `root` for GET and HEAD: "/" and directories map to `index.html`, `Content-Type` by
/// extension, `ETag` (size and mtime) and `Last-Modified`, 304 on `If-None-Match` / `If-Modified-Since`.
///
/// Never leaves the root: encoded separators (`%2f`, `%5c`), NUL, backslashes, dot segments and hidden names are
/// refused, and the real path (symlinks resolved with realpath) must lie inside the real root. Immutable.
public struct StaticFiles: Sendable {
    public let root: String
    private let resolvedRoot: String?

    public init(root: String) {
        self.root = root
        self.resolvedRoot = StaticFiles.realPath(root)
    }

    /// The response for `request`, or nil when this is not a GET/HEAD of an existing file under the root.
    public func handle(_ request: HTTPRequest) async -> HTTPResponse? {
        guard let (real, info) = file(at: request.rawPath) else { return nil }
        guard request.method == .GET || request.method == .HEAD else {
            return errorResponse(.methodNotAllowed, code: "method_not_allowed",
                                 message: "\(request.method.rawValue) is not allowed on \(request.path); use GET or HEAD",
                                 headers: ["Allow": "GET, HEAD"])
        }

        let size = Int64(info.st_size)
        let mtime = Int(info.st_mtim.tv_sec)
        let etag = EntityTag(value: String(size, radix: 16) + "-" + String(mtime, radix: 16) + "-"
                                 + String(Int(info.st_mtim.tv_nsec), radix: 16))
        var headers: HTTPHeaders = [
            "ETag": etag.headerValue,
            "Last-Modified": HTTPDate.format(secondsSince1970: mtime),
            "Cache-Control": "no-cache",
        ]
        if Self.notModified(request, etag: etag, mtime: mtime) {
            return HTTPResponse(status: .notModified, headers: headers)
        }
        headers["Content-Type"] = MediaType.forPath(real)
        return HTTPResponse(status: .ok, headers: headers, body: .file(FileBody(path: real, offset: 0, length: size)))
    }

    static func notModified(_ request: HTTPRequest, etag: EntityTag, mtime: Int) -> Bool {
        if let ifNoneMatch = request.headers["If-None-Match"] {
            return EntityTag.header(ifNoneMatch, matches: etag, weak: true)
        }
        if let ifModifiedSince = request.headers["If-Modified-Since"], let since = HTTPDate.parseSeconds(ifModifiedSince) {
            return mtime <= since
        }
        return false
    }

    /// The decoded path when it is safe to append to the root: starts with "/", no encoded separators or NUL,
    /// no backslash, no empty/dot/hidden segments. nil otherwise.
    /// The regular file a request path names inside the root (a directory names its `index.html`),
    /// with its status; nil for anything outside the root, missing, or not a regular file.
    private func file(at rawPath: String) -> (path: String, info: stat)? {
        guard let resolvedRoot, let relative = Self.safeRelativePath(rawPath) else { return nil }
        var candidate = resolvedRoot + relative
        if relative.hasSuffix("/") { candidate += "index.html" }
        guard var real = Self.realPath(candidate), Self.isInside(real, root: resolvedRoot),
              var info = Self.status(real) else { return nil }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard let index = Self.realPath(real + "/index.html"), Self.isInside(index, root: resolvedRoot),
                  let indexInfo = Self.status(index) else { return nil }
            real = index
            info = indexInfo
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (real, info)
    }

    static func safeRelativePath(_ rawPath: String) -> String? {
        guard rawPath.hasPrefix("/") else { return nil }
        let lowered = rawPath.lowercased()
        for bad in ["%2f", "%5c", "%00"] where lowered.contains(bad) { return nil }
        let decoded = PercentDecoding.decode(rawPath)
        guard !decoded.utf8.contains(0), !decoded.contains("\\"), !decoded.contains("\u{FFFD}") else { return nil }
        let segments = decoded.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty && index == segments.count - 1 { continue }  // trailing slash
            guard !segment.isEmpty, !segment.hasPrefix(".") else { return nil }
        }
        return decoded
    }

    static func isInside(_ path: String, root: String) -> Bool {
        path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func status(_ path: String) -> stat? {
        var info = stat()
        return stat(path, &info) == 0 ? info : nil
    }
}
