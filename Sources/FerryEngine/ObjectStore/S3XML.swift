/// A small XML reader and writer for the few flat documents S3 exchanges (`S3Documents`).
///
/// Why not FoundationXML's `XMLParser`: it is in this toolchain but links libxml2 into the binary, and an
/// event-driven parser for four documents of a few elements costs more code at each use than this tree of
/// elements. What it reads: elements (namespace prefixes dropped, attributes skipped), text with the five
/// predefined entities and numeric character references, CDATA, comments, the `<?xml …?>` declaration.
/// What it refuses: a `<!DOCTYPE` (entities defined there are never needed and never expanded), unbalanced
/// tags, anything after the root. Pure: no I/O.
struct S3XMLElement: Equatable, Sendable {
    /// The local name (`Error`, `Part`), without a namespace prefix.
    var name: String
    var children: [S3XMLElement] = []
    /// The text directly inside the element (entity references decoded), untrimmed.
    var text: String = ""

    /// The first child named `name`.
    func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }

    /// Every child named `name`, in document order.
    func children(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }

    /// The trimmed text of the first child named `name`.
    func value(_ name: String) -> String? {
        child(name).map { Self.trimmed($0.text) }
    }

    /// Without leading and trailing spaces, tabs and line breaks. Walks the UTF-8 bytes (every header line of every
    /// object-store answer comes through here): the bounds it stops at are next to ASCII, so they are character
    /// boundaries.
    static func trimmed(_ text: String) -> String {
        let bytes = text.utf8
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start = bytes.index(after: start) }
        while end > start, isSpace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        if start == bytes.startIndex && end == bytes.endIndex { return text }
        return String(text[start..<end])
    }
}

/// Why a document could not be read: what was wrong and at which byte.
struct S3XMLError: Error, Equatable, CustomStringConvertible, Sendable {
    let reason: String
    let offset: Int
    var description: String { "XML at byte \(offset): \(reason)" }
}

enum S3XML {
    /// Reads the document's root element.
    static func parse(_ bytes: [UInt8]) throws(S3XMLError) -> S3XMLElement {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    /// Escapes text for an element's content or an attribute value.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func document() throws(S3XMLError) -> S3XMLElement {
            try skipMisc()
            guard position < bytes.count else { throw fail("no root element") }
            let root = try element()
            try skipMisc()
            guard position == bytes.count else { throw fail("content after the root element") }
            return root
        }

        /// Whitespace, the declaration, processing instructions and comments between elements.
        private mutating func skipMisc() throws(S3XMLError) {
            while true {
                skipWhitespace()
                if starts(with: "<?") {
                    try skip(past: "?>")
                } else if starts(with: "<!--") {
                    try skip(past: "-->")
                } else if starts(with: "<!") {
                    throw fail("document type declarations are not accepted")
                } else {
                    return
                }
            }
        }

        /// An element from its `<` to its end tag (or `/>`).
        private mutating func element() throws(S3XMLError) -> S3XMLElement {
            guard byte == UInt8(ascii: "<") else { throw fail("expected an element") }
            position += 1
            let qualified = name()
            guard !qualified.isEmpty else { throw fail("element without a name") }
            var element = S3XMLElement(name: Self.localName(qualified))
            // Attributes are skipped, minding quoted values (which may hold '>').
            while true {
                guard position < bytes.count else { throw fail("unterminated start tag <\(qualified)") }
                let current = bytes[position]
                if current == UInt8(ascii: "\"") || current == UInt8(ascii: "'") {
                    position += 1
                    while position < bytes.count, bytes[position] != current { position += 1 }
                    guard position < bytes.count else { throw fail("unterminated attribute value in <\(qualified)") }
                    position += 1
                } else if starts(with: "/>") {
                    position += 2
                    return element
                } else if current == UInt8(ascii: ">") {
                    position += 1
                    break
                } else {
                    position += 1
                }
            }
            var text: [UInt8] = []
            while true {
                guard position < bytes.count else { throw fail("<\(qualified)> is not closed") }
                if starts(with: "</") {
                    position += 2
                    let closing = name()
                    skipWhitespace()
                    guard closing == qualified, byte == UInt8(ascii: ">") else {
                        throw fail("</\(closing)> does not close <\(qualified)>")
                    }
                    position += 1
                    element.text = String(decoding: text, as: UTF8.self)
                    return element
                } else if starts(with: "<!--") {
                    try skip(past: "-->")
                } else if starts(with: "<![CDATA[") {
                    position += 9
                    let start = position
                    try skip(past: "]]>")
                    text += bytes[start..<(position - 3)]
                } else if starts(with: "<?") {
                    try skip(past: "?>")
                } else if byte == UInt8(ascii: "<") {
                    element.children.append(try self.element())
                } else if byte == UInt8(ascii: "&") {
                    text += Array(try reference().utf8)
                } else {
                    text.append(bytes[position])
                    position += 1
                }
            }
        }

        /// `&name;` or `&#N;`/`&#xN;`, decoded.
        private mutating func reference() throws(S3XMLError) -> String {
            let start = position
            guard let end = bytes[position...].firstIndex(of: UInt8(ascii: ";")), end - start <= 12 else {
                throw fail("unterminated entity reference")
            }
            let body = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
            position = end + 1
            switch body {
            case "amp": return "&"
            case "lt": return "<"
            case "gt": return ">"
            case "quot": return "\""
            case "apos": return "'"
            default:
                let number: UInt32?
                if body.hasPrefix("#x") || body.hasPrefix("#X") {
                    number = UInt32(body.dropFirst(2), radix: 16)
                } else if body.hasPrefix("#") {
                    number = UInt32(body.dropFirst(), radix: 10)
                } else {
                    number = nil
                }
                guard let number, let scalar = Unicode.Scalar(number) else {
                    position = start
                    throw fail("unknown entity &\(body);")
                }
                return String(Character(scalar))
            }
        }

        private mutating func name() -> String {
            let start = position
            while position < bytes.count {
                let b = bytes[position]
                if b == UInt8(ascii: ">") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=") || Self.isWhitespace(b) { break }
                position += 1
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        private static func localName(_ qualified: String) -> String {
            guard let colon = qualified.lastIndex(of: ":") else { return qualified }
            return String(qualified[qualified.index(after: colon)...])
        }

        private var byte: UInt8? { position < bytes.count ? bytes[position] : nil }

        private func starts(with literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return literal.withUTF8Buffer { buffer in
                (0..<count).allSatisfy { bytes[position + $0] == buffer[$0] }
            }
        }

        private mutating func skip(past literal: StaticString) throws(S3XMLError) {
            let start = position
            while position < bytes.count {
                if starts(with: literal) {
                    position += literal.utf8CodeUnitCount
                    return
                }
                position += 1
            }
            position = start
            throw fail("\(literal) missing")
        }

        private mutating func skipWhitespace() {
            while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        }

        private static func isWhitespace(_ b: UInt8) -> Bool {
            b == 0x20 || b == 0x09 || b == 0x0a || b == 0x0d
        }

        private func fail(_ reason: String) -> S3XMLError { S3XMLError(reason: reason, offset: position) }
    }
}
