/// Finds the exact bytes of JSON values inside a document without re-encoding them, so that `--json` output
/// repeats what the server sent (`ls --json` gathers the job objects of several pages). Pure.
///
/// It only skips over values (strings with escapes, nesting); it does not validate numbers or literals, so
/// callers hand it documents the JSON decoder already accepted.
public enum JSONSlices {
    /// The bytes of each element of the array stored under `key` in the top-level object; nil when there is
    /// no such array.
    public static func arrayElements(ofKey key: String, in document: [UInt8]) -> [[UInt8]]? {
        var index = skipSpace(document, 0)
        guard index < document.count, document[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        while true {
            index = skipSpace(document, index)
            guard index < document.count else { return nil }
            if document[index] == UInt8(ascii: "}") { return nil }
            if document[index] == UInt8(ascii: ",") { index += 1; continue }
            guard document[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index
            guard let keyEnd = skipValue(document, index) else { return nil }
            let name = String(decoding: document[(keyStart + 1)..<(keyEnd - 1)], as: UTF8.self)
            index = skipSpace(document, keyEnd)
            guard index < document.count, document[index] == UInt8(ascii: ":") else { return nil }
            index = skipSpace(document, index + 1)
            guard let valueEnd = skipValue(document, index) else { return nil }
            if name == key { return elements(ofArray: Array(document[index..<valueEnd])) }
            index = valueEnd
        }
    }

    /// The bytes of each element of a top-level array; nil when `document` is not an array.
    public static func elements(ofArray document: [UInt8]) -> [[UInt8]]? {
        var index = skipSpace(document, 0)
        guard index < document.count, document[index] == UInt8(ascii: "[") else { return nil }
        index += 1
        var elements: [[UInt8]] = []
        while true {
            index = skipSpace(document, index)
            guard index < document.count else { return nil }
            switch document[index] {
            case UInt8(ascii: "]"): return elements
            case UInt8(ascii: ","): index += 1
            default:
                guard let end = skipValue(document, index) else { return nil }
                elements.append(Array(document[index..<end]))
                index = end
            }
        }
    }

    private static func skipSpace(_ bytes: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index just after the value starting at `start`.
    private static func skipValue(_ bytes: [UInt8], _ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            var index = start + 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): return index + 1
                default: index += 1
                }
            }
            return nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let end = skipValue(bytes, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            let ends: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
            while index < bytes.count, !ends.contains(bytes[index]) { index += 1 }
            return index > start ? index : nil
        }
    }
}
