/// Percent-decoding of request paths and query components (RFC 3986 2.1). Invalid escapes are kept literally;
/// bytes that are not UTF-8 become U+FFFD.
enum PercentDecoding {
    static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool = false) -> String {
        let utf8 = text.utf8
        guard utf8.contains(UInt8(ascii: "%")) || (plusAsSpace && utf8.contains(UInt8(ascii: "+"))) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = Array(utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
               let high = ASCII.hexValue(iterator[iterator.startIndex]),
               let low = ASCII.hexValue(iterator[iterator.startIndex + 1]) {
                bytes.append(UInt8(high << 4 | low))
                iterator = iterator.dropFirst(2)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
