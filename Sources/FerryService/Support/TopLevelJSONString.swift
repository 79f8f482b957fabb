/// Reads one string member of a JSON object's top level without parsing the rest into values: the cluster's event
/// feed asks every stored `job` event of every node for its `state` (does it close the job's streams?), and a whole
/// parse of each event (`JSONSerialization`) was a large part of a node's CPU per job. Pure.
///
/// Only the top level is searched: a member of a nested object or array is skipped with its value (strings, escapes
/// and nesting respected). The value is returned when it is a string without escapes; nil when the key is absent,
/// its value is no string, holds an escape, or the text is not a JSON object (the caller may then parse it whole).
enum TopLevelJSONString {
    static func value(of key: String, in bytes: [UInt8]) -> String? {
        var scanner = Scanner(bytes: bytes)
        let wanted = Array(key.utf8)
        scanner.skipSpaces()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        while true {
            scanner.skipSpaces()
            guard let name = scanner.string() else { return nil }
            scanner.skipSpaces()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipSpaces()
            if name.escaped == false && bytes[name.range].elementsEqual(wanted) {
                guard let value = scanner.string(), !value.escaped else { return nil }
                return String(decoding: bytes[value.range], as: UTF8.self)
            }
            guard scanner.skipValue() else { return nil }
            scanner.skipSpaces()
            guard scanner.take(UInt8(ascii: ",")) else { return nil }  // `}`: the key is not there
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        /// What ends a bare value (`true`, `12`, `null`).
        static func endsWord(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: true
            default: false
            }
        }

        mutating func skipSpaces() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D {
                at += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// A string starting here: the range of its contents between the quotes and whether it holds an escape.
        mutating func string() -> (range: Range<Int>, escaped: Bool)? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = at
            var escaped = false
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "\""):
                    at += 1
                    return (start..<at - 1, escaped)
                case UInt8(ascii: "\\"):
                    escaped = true
                    at += 2
                default:
                    at += 1
                }
            }
            return nil
        }

        /// Skips one value (a string, an object or array with everything inside, or a bare word or number).
        mutating func skipValue() -> Bool {
            guard at < bytes.count else { return false }
            switch bytes[at] {
            case UInt8(ascii: "\""):
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while at < bytes.count {
                    switch bytes[at] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            at += 1
                            return true
                        }
                    default:
                        break
                    }
                    at += 1
                }
                return false
            default:
                let start = at
                while at < bytes.count, !Self.endsWord(bytes[at]) { at += 1 }
                return at > start
            }
        }
    }
}
