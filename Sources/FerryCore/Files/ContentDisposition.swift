/// Reads file names from `Content-Disposition` response headers (RFC 6266) and writes the header for
/// files Ferry serves.
///
/// Reading follows RFC 6266 with RFC 8187 (formerly 5987) extended values, and the leniency browsers show
/// toward real servers:
/// - `filename*` wins over `filename` whatever their order; charsets `UTF-8` and `ISO-8859-1`
///   (case-insensitive) are understood, the language tag is ignored, and a quoted extended value is
///   tolerated. A `filename*` that cannot be decoded
///   (unknown charset, bad `%`, invalid UTF-8) is ignored and `filename` is used.
/// - `filename` may be a token, a quoted-string with `\` escapes, or (lenient) an unquoted value with
///   spaces, up to the next `;`. When its characters are all in U+0000–U+00FF and, read as bytes, form
///   valid UTF-8, they are read as UTF-8 (servers that send raw UTF-8 in the header, decoded by the
///   client as ISO-8859-1).
/// - Parameter names are case-insensitive; the first occurrence of a parameter counts; the disposition
///   type may be missing.
/// - Anything malformed gives `nil`, never a crash. The result is not sanitized: pass it to
///   ``Filename/sanitize(_:)``.
public enum ContentDisposition {
    /// The file name in a `Content-Disposition` header value, unsanitized, or `nil`.
    public static func filename(_ header: String) -> String? {
        guard let parameters = parseParameters(header) else { return nil }
        if let extended = parameters.first(where: { $0.name == "filename*" }),
           let name = decodeExtendedValue(extended.value), !name.isEmpty {
            return name
        }
        if let plain = parameters.first(where: { $0.name == "filename" }), !plain.value.isEmpty {
            return reinterpretLatin1AsUTF8(plain.value)
        }
        return nil
    }

    /// A header value for serving a file as a download:
    /// `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>`.
    ///
    /// The fallback replaces every non-ASCII character and control character with `_` and escapes `"` and
    /// `\` with a backslash; the extended form percent-encodes everything but RFC 8187 `attr-char`s.
    public static func attachment(filename: String) -> String {
        var fallback = ""
        for scalar in filename.unicodeScalars {
            switch scalar.value {
            case 0x22, 0x5C: fallback += "\\" + String(scalar)
            case 0x20...0x7E: fallback.unicodeScalars.append(scalar)
            default: fallback += "_"
            }
        }
        let attrChars = Set("!#$&+-.^_`|~".utf8)
        let encoded = PercentEncoding.encode(filename.utf8) { byte in
            (byte >= 48 && byte <= 57) || ((byte | 0x20) >= 97 && (byte | 0x20) <= 122) || attrChars.contains(byte)
        }
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }

    // MARK: - Parsing

    struct Parameter {
        var name: String     // lowercased
        var value: String    // unquoted, escapes resolved
        var quoted: Bool
    }

    /// Splits `type; name=value; ...` into parameters; `nil` when the structure is broken (an unterminated
    /// quoted-string, a parameter without `=` or name).
    static func parseParameters(_ header: String) -> [Parameter]? {
        let chars = Array(header.unicodeScalars)
        var i = 0
        func skipSpaces() { while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 } }
        var parameters: [Parameter] = []
        var seen: Set<String> = []
        skipSpaces()
        // Disposition type: a token before the first ';' that has no '='.
        var typeEnd = i
        while typeEnd < chars.count, chars[typeEnd] != ";", chars[typeEnd] != "=" { typeEnd += 1 }
        if typeEnd == chars.count || chars[typeEnd] == ";" { i = typeEnd }
        while i < chars.count {
            skipSpaces()
            if i < chars.count, chars[i] == ";" { i += 1; continue }
            if i >= chars.count { break }
            var nameEnd = i
            while nameEnd < chars.count, chars[nameEnd] != "=", chars[nameEnd] != ";" { nameEnd += 1 }
            guard nameEnd < chars.count, chars[nameEnd] == "=" else { return nil }
            let name = String(String.UnicodeScalarView(chars[i..<nameEnd])).trimmingCharacters(inSet: [" ", "\t"]).lowercased()
            guard !name.isEmpty else { return nil }
            i = nameEnd + 1
            skipSpaces()
            var value = String.UnicodeScalarView()
            var quoted = false
            if i < chars.count, chars[i] == "\"" {
                quoted = true
                i += 1
                var closed = false
                while i < chars.count {
                    let c = chars[i]
                    if c == "\\" {
                        guard i + 1 < chars.count else { return nil }
                        value.append(chars[i + 1])
                        i += 2
                    } else if c == "\"" {
                        closed = true
                        i += 1
                        break
                    } else {
                        value.append(c)
                        i += 1
                    }
                }
                guard closed else { return nil }
                skipSpaces()
                guard i >= chars.count || chars[i] == ";" else { return nil }
            } else {
                while i < chars.count, chars[i] != ";" {
                    guard chars[i] != "\"" else { return nil }
                    value.append(chars[i])
                    i += 1
                }
                value = String(value).trimmingCharacters(inSet: [" ", "\t"]).unicodeScalars
            }
            if seen.insert(name).inserted {
                parameters.append(Parameter(name: name, value: String(value), quoted: quoted))
            }
        }
        return parameters
    }

    /// RFC 8187 `charset'language'value-chars`.
    static func decodeExtendedValue(_ value: String) -> String? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        guard pieces[2].unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
              let bytes = PercentEncoding.decodeStrict(pieces[2].utf8) else { return nil }
        switch charset {
        case "utf-8":
            return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1", "latin1", "us-ascii":
            if charset == "us-ascii", bytes.contains(where: { $0 >= 0x80 }) { return nil }
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }

    /// Reads a value whose scalars are all below U+0100 as UTF-8 bytes when they form valid, non-ASCII UTF-8.
    static func reinterpretLatin1AsUTF8(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard scalars.allSatisfy({ $0.value < 0x100 }), scalars.contains(where: { $0.value >= 0x80 }) else { return value }
        return String(validating: scalars.map { UInt8($0.value) }, as: UTF8.self) ?? value
    }
}
