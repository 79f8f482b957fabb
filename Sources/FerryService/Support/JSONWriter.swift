/// Builds compact JSON text into a byte buffer, in the order fields are written.
///
/// Responses and events are written with this rather than `JSONEncoder` so that field order is
/// stable, `null` fields are explicit (API.md shows them), and no intermediate objects are made.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { needsComma.removeLast(); bytes.append(UInt8(ascii: "}")) }
    mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { needsComma.removeLast(); bytes.append(UInt8(ascii: "]")) }

    /// Writes `"name":` inside an object; the value written next belongs to it.
    mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) { separate(); appendString(value) }
    mutating func int(_ value: Int64) { separate(); bytes.append(contentsOf: String(value).utf8) }
    mutating func int(_ value: Int) { int(Int64(value)) }
    mutating func bool(_ value: Bool) { separate(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }
    /// Finite numbers only; NaN and infinities become `null`.
    mutating func double(_ value: Double) {
        guard value.isFinite else { null(); return }
        separate()
        if value == value.rounded(), abs(value) < 1e15 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
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

    private mutating func separate() {
        let last = needsComma.count - 1
        if needsComma[last] { bytes.append(UInt8(ascii: ",")) }
        needsComma[last] = true
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
