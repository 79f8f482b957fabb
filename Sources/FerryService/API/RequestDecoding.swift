import FerryHTTP
import FerryStore
import Foundation

/// Turns request bodies and query strings into values, with `invalid_request` errors that name
/// the field at fault. Unknown JSON fields are ignored (API.md, "Errors").
enum RequestDecoding {
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(APIError) -> T {
        guard !bytes.isEmpty else { throw APIError(.invalidRequest, "a JSON body is required") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               let number = NumberOutOfPlace.find(in: bytes) {
                // Foundation reports a number no integer field can hold (1e30, 1.5) as "not valid JSON".
                throw APIError(.invalidRequest, number.sentence)
            }
            throw APIError(.invalidRequest, describe(error))
        } catch {
            throw APIError(.invalidRequest, "the body is not valid JSON")
        }
    }

    /// A sentence naming the field and what was wrong with it.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let names = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "the body" : "'" + names.joined(separator: ".").replacingOccurrences(of: ".[", with: "[") + "'"
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(describe(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(describe(type))"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is required"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not valid JSON" : "\(path(context.codingPath)) is not valid"
        @unknown default:
            return "the body is not valid"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "a whole number"
        case is [String: String].Type: "an object of strings"
        case is [String].Type: "an array of strings"
        case is [Any].Type: "an array"
        case is Double.Type, is Float.Type: "a number"
        default:
            // Swift's names (`Dictionary<String, Any>`) mean nothing to a client: say the JSON kind.
            String(describing: type).hasPrefix("Dictionary") ? "an object"
                : String(describing: type).hasPrefix("Array") ? "an array" : "a value of another kind"
        }
    }

    /// True when the body is a JSON array (after leading white space).
    static func isArray(_ bytes: [UInt8]) -> Bool {
        bytes.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) } == UInt8(ascii: "[")
    }

    /// The opaque list cursor for a sequence number (the stores' `JobCursor`), and back.
    static func cursor(_ sequence: Int64) -> String { JobCursor(sequence: sequence).encoded }

    static func sequence(fromCursor text: String) throws(APIError) -> Int64 {
        do { return try JobCursor(decoding: text).sequence } catch {
            throw APIError(.invalidRequest, "'after' is not a cursor this server issued")
        }
    }
}
