extension SubmittedURL {
    /// The longest URL accepted, in bytes: enough for long signed URLs, small enough to bound parsing work.
    public static let maxLength = 65_536

    /// Parses `text` as described on ``SubmittedURL``, accepting the schemes in `schemes` (``webSchemes`` unless
    /// told: webhooks and delivery targets; a job's source takes ``downloadSchemes``).
    /// - Throws: ``URLProblem/unsupportedScheme(_:)`` for other schemes,
    ///   ``URLProblem/invalid(_:)`` for everything else that is wrong.
    public static func parse(_ text: String, schemes: Set<String> = webSchemes) throws(URLProblem) -> SubmittedURL {
        var bytes = Array(text.utf8)
        // WHATWG: strip leading and trailing C0 control or space.
        while let last = bytes.last, last <= 0x20 { bytes.removeLast() }
        let leading = bytes.prefix(while: { $0 <= 0x20 }).count
        bytes.removeFirst(leading)
        guard !bytes.isEmpty else { throw .invalid("the URL is empty") }
        guard bytes.count <= maxLength else { throw .invalid("the URL is longer than \(maxLength) bytes") }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) {
            throw .invalid("the URL contains control characters")
        }

        // Scheme.
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, isAlpha(bytes[0]),
              bytes[1..<colon].allSatisfy({ isAlpha($0) || isDigit($0) || $0 == 43 || $0 == 45 || $0 == 46 }) else {
            throw .invalid("the URL has no scheme; it must start with http:// or https://")
        }
        let scheme = String(decoding: bytes[0..<colon], as: UTF8.self).lowercased()
        guard schemes.contains(scheme) else { throw .unsupportedScheme(scheme) }

        // Authority: after any run of / or \, up to the first / \ ? #.
        var index = colon + 1
        while index < bytes.count, bytes[index] == 47 || bytes[index] == 92 { index += 1 }
        let authorityStart = index
        while index < bytes.count, ![47, 92, 63, 35].contains(bytes[index]) { index += 1 }
        var hostPort = bytes[authorityStart..<index]
        let rest = bytes[index...]

        var userinfo: String? = nil
        if let at = hostPort.lastIndex(of: UInt8(ascii: "@")) {
            userinfo = encodeUserinfo(hostPort[hostPort.startIndex..<at])
            hostPort = hostPort[(at + 1)...]
        }
        guard !hostPort.isEmpty else { throw .invalid("the URL has no host") }

        // Split host and port; a bracketed IPv6 literal may contain colons.
        let hostText: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8>? = nil
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else {
                throw .invalid("the IPv6 address is missing its closing bracket")
            }
            hostText = hostPort[hostPort.startIndex...close]
            let after = hostPort[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { throw .invalid("unexpected characters after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let portColon = hostPort.firstIndex(of: UInt8(ascii: ":")) {
            hostText = hostPort[hostPort.startIndex..<portColon]
            portText = hostPort[(portColon + 1)...]
        } else {
            hostText = hostPort
        }
        let host = try HostParser.parse(hostText)
        var port: Int? = nil
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(isDigit) else { throw .invalid("the port is not a number") }
            var value = 0
            for digit in portText {
                value = value * 10 + Int(digit - 48)
                guard value <= 65_535 else { throw .invalid("the port is out of range (0-65535)") }
            }
            port = value
        }
        if port == defaultPort(of: scheme) { port = nil }

        return SubmittedURL(scheme: scheme, host: host, port: port, pathAndQuery: encodePathAndQuery(rest), userinfo: userinfo)
    }

    /// The path (with `\` read as `/`, at least `/`) and the query, fragment removed, with spaces and
    /// non-ASCII bytes percent-encoded.
    private static func encodePathAndQuery(_ rest: ArraySlice<UInt8>) -> String {
        let withoutFragment = rest.prefix(while: { $0 != UInt8(ascii: "#") })
        let queryStart = withoutFragment.firstIndex(of: UInt8(ascii: "?")) ?? withoutFragment.endIndex
        var path = withoutFragment[withoutFragment.startIndex..<queryStart].map { $0 == 92 ? UInt8(ascii: "/") : $0 }
        if path.isEmpty { path = [UInt8(ascii: "/")] }
        let query = withoutFragment[queryStart...]
        let keep: (UInt8) -> Bool = { $0 > 0x20 && $0 < 0x7f }
        return PercentEncoding.encode(path, keeping: keep) + PercentEncoding.encode(query, keeping: keep)
    }

    /// `user[:password]` percent-encoded with the WHATWG userinfo set (existing `%XX` kept); `nil` when empty.
    private static func encodeUserinfo(_ raw: ArraySlice<UInt8>) -> String? {
        guard !raw.isEmpty else { return nil }
        let forbidden: Set<UInt8> = Set(" \"#<>?`{}/:;=@[\\]^|".utf8)
        let keep: (UInt8) -> Bool = { $0 > 0x20 && $0 < 0x7f && !forbidden.contains($0) }
        if let colon = raw.firstIndex(of: UInt8(ascii: ":")) {
            let user = PercentEncoding.encode(raw[raw.startIndex..<colon], keeping: keep)
            let password = PercentEncoding.encode(raw[(colon + 1)...], keeping: keep)
            if user.isEmpty && password.isEmpty { return nil }
            return password.isEmpty ? user : user + ":" + password
        }
        return PercentEncoding.encode(raw, keeping: keep)
    }

    private static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 97 && (c | 0x20) <= 122 }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
}
