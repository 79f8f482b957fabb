/// The name `ferry get` saves a file under when no `-o` is given: the job's filename, made safe to use in the
/// current directory whatever the server sent. Pure.
///
/// No path separators ("/" and "\"), no control characters, no leading dots (no hidden files, no "..") and at
/// most 255 bytes of UTF-8; what is left empty becomes "download".
public enum LocalFilename {
    public static func sanitize(_ name: String?) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in (name ?? "").unicodeScalars {
            switch scalar.value {
            case 0x2F, 0x5C: scalars.append("_")
            case 0..<0x20, 0x7F..<0xA0: continue
            default: scalars.append(scalar)
            }
        }
        var text = String(scalars).trimmingWhitespace()
        while text.hasPrefix(".") { text.removeFirst() }
        text = text.trimmingWhitespace()
        while text.utf8.count > 255 { text.removeLast() }
        return text.isEmpty ? "download" : text
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
