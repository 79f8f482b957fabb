import Foundation

/// Turns untrusted names (from API requests, `Content-Disposition` headers and URLs) into safe names for
/// files in the spool's `files/` directory.
///
/// A sanitized name:
/// - is the last non-empty component after `/` or `\` (`"../../etc/passwd"` → `"passwd"`);
/// - is in Unicode normalization form C, so a name typed on macOS (decomposed) and the same name typed
///   elsewhere are the same bytes on disk;
/// - has no C0 controls (NUL included), DEL or C1 controls, no bidirectional formatting characters
///   (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C, which can make `exe.txt` display as `txt.exe`),
///   no U+2028/U+2029 separators and no byte order mark;
/// - has the characters Windows forbids (`< > : " | ? *`) replaced by `_`, so files can be copied to SMB
///   shares and Windows clients unchanged, while staying readable;
/// - does not start with a Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`,
///   alone or before a dot, any case): those get a leading `_` (`"nul.txt"` → `"_nul.txt"`);
/// - has no leading dots (no hidden files, no `.`/`..`) and no leading or trailing whitespace or trailing
///   dots (Windows strips them);
/// - is at most 255 bytes of UTF-8: longer names are cut inside the part before the extension, at a
///   character boundary (a user-perceived character, never inside a UTF-8 scalar), keeping the extension.
///
/// `nil` means nothing usable was left.
public enum Filename {
    /// The longest name, in UTF-8 bytes, that Linux file systems accept.
    public static let maxBytes = 255

    /// `raw` made safe as described on ``Filename``, or `nil` when nothing is left.
    public static func sanitize(_ raw: String) -> String? {
        let component = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in component.precomposedStringWithCanonicalMapping.unicodeScalars {
            if isRemoved(scalar) { continue }
            scalars.append(isReplaced(scalar) ? "_" : scalar)
        }
        var cleaned = trimmed(String(scalars))
        guard !cleaned.isEmpty else { return nil }
        if isWindowsDeviceName(cleaned) { cleaned = "_" + cleaned }
        let capped = cap(cleaned)
        return capped.isEmpty ? nil : capped
    }

    /// The name a URL suggests: its last non-empty path segment, percent-decoded (UTF-8, or ISO-8859-1 when
    /// the bytes are not UTF-8), then sanitized. The query and fragment are ignored; `scheme://authority` is
    /// skipped when present. `nil` when the URL has no usable segment (e.g. `https://example.com/`).
    public static func fromURLPath(_ url: String) -> String? {
        var text = Substring(url)
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        if let schemeEnd = text.range(of: "://") {
            let afterScheme = text[schemeEnd.upperBound...]
            guard let pathStart = afterScheme.firstIndex(where: { $0 == "/" || $0 == "\\" }) else { return nil }
            text = afterScheme[pathStart...]
        }
        guard let segment = text.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last else { return nil }
        let bytes = PercentEncoding.decode(segment.utf8)
        let decoded = String(validating: bytes, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        return sanitize(decoded)
    }

    /// The name for a new download: the first of the requested name, the `Content-Disposition` file name and
    /// the final URL's name that sanitizes to something, else `"download"`.
    public static func resolve(requested: String?, contentDisposition: String?, finalURL: String) -> String {
        if let requested, let name = sanitize(requested) { return name }
        if let header = contentDisposition, let raw = ContentDisposition.filename(header), let name = sanitize(raw) { return name }
        if let name = fromURLPath(finalURL) { return name }
        return "download"
    }

    /// The `number`th alternative for a name that is taken: `"report (1).pdf"`.
    ///
    /// The number goes before the extension, which is the part after the last dot, except that the
    /// compound archive extensions `.tar.gz`, `.tar.bz2`, `.tar.xz`, `.tar.zst`, `.tar.lz`, `.tar.lzma`,
    /// `.tar.Z` and `.tar.br` stay whole (`"a.tar.gz"` → `"a (1).tar.gz"`, as browsers do). Dotless names
    /// get the suffix at the end. The result is still at most 255 bytes (the stem is shortened). A number
    /// below 1 returns `name` unchanged.
    public static func variant(_ name: String, number: Int) -> String {
        guard number >= 1 else { return name }
        let (stem, ext) = split(name)
        let suffix = " (\(number))"
        let room = maxBytes - suffix.utf8.count - ext.utf8.count
        if room >= 1 {
            return truncate(stem, toBytes: room) + suffix + ext
        }
        return truncate(stem + suffix + ext, toBytes: maxBytes)
    }

    // MARK: - Pieces

    private static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true                 // C0, DEL, C1
        case 0x200E, 0x200F, 0x061C: return true                   // LRM, RLM, ALM
        case 0x202A...0x202E, 0x2066...0x2069: return true         // embeddings, overrides, isolates
        case 0x2028, 0x2029, 0xFEFF: return true                   // line/paragraph separators, BOM
        default: return false
        }
    }

    private static func isReplaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "<", ">", ":", "\"", "|", "?", "*": return true
        default: return false
        }
    }

    /// Whether the part before the first dot is a name Windows reserves for devices.
    private static func isWindowsDeviceName(_ name: String) -> Bool {
        let base = name.split(separator: ".", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        let trimmedBase = base.trimmingCharacters(inSet: [" "])
        if ["CON", "PRN", "AUX", "NUL"].contains(trimmedBase) { return true }
        guard trimmedBase.count == 4, let last = trimmedBase.last, ("1"..."9").contains(last) else { return false }
        return trimmedBase.hasPrefix("COM") || trimmedBase.hasPrefix("LPT")
    }

    /// Leading whitespace and dots, trailing whitespace and dots removed.
    private static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let isTrimmed: (Unicode.Scalar) -> Bool = { $0 == "." || $0.properties.isWhitespace }
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
              let last = scalars.lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// Splits off the extension: `("archive", ".tar.gz")`, `("a.b", ".c")`, `("name", "")`.
    static func split(_ name: String) -> (stem: String, ext: String) {
        let compound = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz", ".tar.lzma", ".tar.z", ".tar.br"]
        let lower = name.lowercased()
        for ext in compound where lower.hasSuffix(ext) && lower.utf8.count > ext.utf8.count {
            let cut = name.utf8.index(name.utf8.endIndex, offsetBy: -ext.utf8.count)
            if let splitIndex = cut.samePosition(in: name) {
                return (String(name[..<splitIndex]), String(name[splitIndex...]))
            }
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    /// Caps a cleaned name at ``maxBytes``, keeping a reasonable extension.
    private static func cap(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        let (stem, ext) = split(name)
        // An "extension" longer than 32 bytes is not one worth keeping.
        if !ext.isEmpty, ext.utf8.count <= 32 {
            let shortened = trimmed(truncate(stem, toBytes: maxBytes - ext.utf8.count))
            if !shortened.isEmpty { return shortened + ext }
        }
        return trimmed(truncate(name, toBytes: maxBytes))
    }

    /// The longest prefix of `text` with at most `limit` UTF-8 bytes, cut between characters when possible
    /// and otherwise between scalars.
    static func truncate(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > limit { break }
            result.append(character)
            used += size
        }
        if result.isEmpty {
            // A single enormous character (e.g. many combining marks): fall back to scalar boundaries.
            var scalars = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                let size = String(scalar).utf8.count
                if used + size > limit { break }
                scalars.append(scalar)
                used += size
            }
            result = String(scalars)
        }
        return result
    }
}
