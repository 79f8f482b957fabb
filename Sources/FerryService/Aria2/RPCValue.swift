import Foundation

/// A JSON value of aria2's RPC, as decoded from a call and as written in an answer. Objects are written with their
/// keys in sorted order, as aria2 writes them; `json` is a value already written (status objects, `Aria2Status`),
/// never decoded. Pure.
indirect enum RPCValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([RPCValue])
    case object([String: RPCValue])
    /// JSON text already written, spliced into the answer as it is.
    case json([UInt8])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([RPCValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: RPCValue].self))
        }
    }

    /// The value `bytes` hold, nil when they are not JSON: read by `RPCValueParser` when it can, else by `JSONDecoder`.
    static func parse(_ bytes: [UInt8]) -> RPCValue? {
        RPCValueParser.parse(bytes) ?? decoded(bytes)
    }

    /// The value `bytes` hold as `JSONDecoder` reads them, nil when they are not JSON.
    static func decoded(_ bytes: [UInt8]) -> RPCValue? {
        try? JSONDecoder().decode(RPCValue.self, from: Data(bytes))
    }

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var array: [RPCValue]? { if case .array(let value) = self { value } else { nil } }
    var object: [String: RPCValue]? { if case .object(let value) = self { value } else { nil } }
    var int: Int64? { if case .int(let value) = self { value } else { nil } }

    /// A decimal string, the way aria2 sends every number.
    static func decimal(_ value: Int64) -> RPCValue { .string(String(value)) }
    static func decimal(_ value: Int) -> RPCValue { .string(String(value)) }

    func write(into json: inout JSONWriter) {
        switch self {
        case .null: json.null()
        case .bool(let value): json.bool(value)
        case .int(let value): json.int(value)
        case .double(let value): json.double(value)
        case .string(let value): json.string(value)
        case .array(let values):
            json.beginArray()
            for value in values { value.write(into: &json) }
            json.endArray()
        case .object(let members):
            json.beginObject()
            for key in members.keys.sorted() {
                json.key(key)
                members[key]!.write(into: &json)
            }
            json.endObject()
        case .json(let bytes): json.raw(bytes)
        }
    }

    var bytes: [UInt8] {
        var json = JSONWriter()
        write(into: &json)
        return json.bytes
    }
}
