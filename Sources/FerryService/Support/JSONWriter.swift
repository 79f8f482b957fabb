import FerryCore
import Foundation

/// Builds compact JSON text into a byte buffer, in the order fields are written.
///
/// Responses and events are written with this rather than `JSONEncoder` so that field order is
/// stable, `null` fields are explicit (API.md shows them), and no intermediate objects are made.
/// A value owned by whoever writes it. Strings that need no escaping (the common case: ids, URLs,
/// states, keys) are copied in one piece; numbers are written as digits without making a `String`.
/// Nesting is limited to 64 levels (the API's documents have a handful).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Bit `depth`: the current container already holds a value (a comma goes before the next).
    /// Bits below it: the same for the enclosing containers.
    private var commas: UInt64 = 0
    private var depth = 0

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Writes `"name":` inside an object; the value written next belongs to it.
    mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        commas &= ~(1 << UInt64(depth))
    }

    mutating func string(_ value: String) { separate(); appendString(value) }
    mutating func int(_ value: Int64) { separate(); appendDecimal(value) }
    mutating func int(_ value: Int) { int(Int64(value)) }
    mutating func bool(_ value: Bool) { separate(); appendASCII(value ? "true" : "false") }
    mutating func null() { separate(); appendASCII("null") }
    /// Finite numbers only; NaN and infinities become `null`.
    mutating func double(_ value: Double) {
        guard value.isFinite else { null(); return }
        separate()
        if value == value.rounded(), abs(value) < 1e15 {
            appendDecimal(Int64(value))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }
    /// Splices already-encoded JSON (e.g. a nested object rendered elsewhere).
    mutating func raw(_ json: [UInt8]) { separate(); bytes.append(contentsOf: json) }

    mutating func field(_ name: String, _ value: String?) { key(name); if let value { string(value) } else { null() } }
    mutating func field(_ name: String, _ value: Int64?) { key(name); if let value { int(value) } else { null() } }
    mutating func field(_ name: String, _ value: Int?) { key(name); if let value { int(value) } else { null() } }
    mutating func field(_ name: String, _ value: Double?) { key(name); if let value { double(value) } else { null() } }
    mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }
    /// An RFC 3339 time as the API shows it (`Timestamp.rfc3339`), or `null`.
    mutating func field(_ name: String, timestamp value: Date?) {
        key(name)
        guard let value else { null(); return }
        separate()
        bytes.append(UInt8(ascii: "\""))
        Timestamp.appendRFC3339(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        precondition(depth < 63, "JSONWriter: nesting deeper than 63 levels")
        depth += 1
        commas &= ~(1 << UInt64(depth))
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        bytes.append(bracket)
    }

    private mutating func separate() {
        let bit: UInt64 = 1 << UInt64(depth)
        if commas & bit != 0 { bytes.append(UInt8(ascii: ",")) }
        commas |= bit
    }

    /// Text known to be plain ASCII with nothing to escape (literals of this type).
    private mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendDecimal(_ value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // Digits from the end of a 20-byte scratch (enough for Int64.min's magnitude), then copied.
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { scratch in
            var start = 20
            repeat {
                start -= 1
                scratch[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[start..<20]))
        }
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            // Copy runs of bytes that need no escaping in one piece; escape the rest one by one.
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard JSONWriter.needsEscape(byte) else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                appendEscaped(byte)
                runStart = index + 1
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(92); bytes.append(34)
        case UInt8(ascii: "\\"): bytes.append(92); bytes.append(92)
        case 0x0A: bytes.append(92); bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(92); bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(92); bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                bytes.append(92); bytes.append(UInt8(ascii: "u")); bytes.append(48); bytes.append(48)
                bytes.append(digits[Int(byte >> 4)]); bytes.append(digits[Int(byte & 0xF)])
            }
        }
    }
}
