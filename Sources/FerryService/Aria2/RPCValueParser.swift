/// Reads the JSON of an RPC call into an `RPCValue` without `JSONDecoder` (which cost a poll more than writing its
/// answer), for the JSON clients send: UTF-8 without a byte order mark; strings without control characters or `\u`
/// escapes; integers that fit `Int64`, without a fraction or exponent; objects without repeated keys; at most 64 levels.
/// Anything else gives nil, and the caller then decodes with `JSONDecoder` (`RPCValue.parse`), so every answer, values
/// and errors, is `JSONDecoder`'s. Pure.
struct RPCValueParser {
    static let maxDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The value `bytes` hold, or nil when they are not JSON this parser reads (above).
    static func parse(_ bytes: [UInt8]) -> RPCValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = RPCValueParser(buffer)
            guard let value = parser.value(depth: 0) else { return nil }
            parser.skipWhitespace()
            return parser.index == buffer.count ? value : nil
        }
    }

    private mutating func value(depth: Int) -> RPCValue? {
        skipWhitespace()
        guard index < bytes.count, depth < Self.maxDepth else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(RPCValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return integer()
        }
    }

    private mutating func object(depth: Int) -> RPCValue? {
        index += 1
        var members: [String: RPCValue] = [:]
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")), let member = value(depth: depth + 1),
                  members.updateValue(member, forKey: key) == nil else { return nil }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}")) ? .object(members) : nil
        }
    }

    private mutating func array(depth: Int) -> RPCValue? {
        index += 1
        var items: [RPCValue] = []
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return .array(items) }
        while true {
            guard let item = value(depth: depth + 1) else { return nil }
            items.append(item)
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? .array(items) : nil
        }
    }

    /// A string at `index` (its opening quote); nil for a control character, a `\u` escape or text that is not UTF-8.
    private mutating func string() -> String? {
        index += 1
        let start = index
        var escaped: [UInt8]?
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = escaped ?? Array(bytes[start..<index])
                index += 1
                return String(validating: text, as: UTF8.self)
            }
            guard byte >= 0x20 else { return nil }
            if byte == UInt8(ascii: "\\") {
                if escaped == nil { escaped = Array(bytes[start..<index]) }
                index += 1
                guard index < bytes.count, let unescaped = Self.unescaped(bytes[index]) else { return nil }
                escaped?.append(unescaped)
            } else {
                escaped?.append(byte)
            }
            index += 1
        }
        return nil
    }

    /// The byte a two-character escape stands for (`\u` is left to `JSONDecoder`).
    private static func unescaped(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// `-?(0|[1-9][0-9]*)` within `Int64`, not followed by a fraction or an exponent.
    private mutating func integer() -> RPCValue? {
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            return nil
        }
        if negative {
            // `-0` is left to `JSONDecoder`, which reads it as it will.
            guard magnitude > 0, magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .int(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return .int(Int64(magnitude))
    }

    private mutating func literal(_ word: StaticString, _ value: RPCValue) -> RPCValue? {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        return value
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}
