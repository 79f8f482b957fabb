/// An error answer of aria2's RPC: its code and message, in aria2 1.36's own words (checked against `aria2c
/// --enable-rpc`). Pure.
struct Aria2Error: Error, Equatable, Sendable {
    let code: Int
    let message: String

    init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Code 1, aria2's code for every error that is not about the JSON-RPC envelope.
    init(_ message: String) {
        self.init(1, message)
    }

    static let parse = Aria2Error(-32700, "Parse error.")
    static let invalidRequest = Aria2Error(-32600, "Invalid Request.")
    static let invalidParams = Aria2Error(-32602, "Invalid params.")
    static let unauthorized = Aria2Error(1, "Unauthorized")

    static func noSuchMethod(_ name: String) -> Aria2Error { Aria2Error(1, "No such method: \(name)") }
    static func notFound(gid: String) -> Aria2Error { Aria2Error(1, "GID \(gid) is not found") }
    static func invalidGID(_ text: String) -> Aria2Error { Aria2Error(1, "Invalid GID \(text)") }
    static func missing(at index: Int) -> Aria2Error { Aria2Error(1, "The parameter at \(index) is required but missing.") }
    static func wrongType(at index: Int) -> Aria2Error { Aria2Error(1, "The parameter at \(index) has wrong type.") }
    static func negative(at index: Int) -> Aria2Error {
        Aria2Error(1, "The integer parameter at \(index) has invalid value: the value must be greater than or equal to 0.")
    }
    static func option(_ name: String) -> Aria2Error {
        Aria2Error(1, "We encountered a problem while processing the option '--\(name)'.")
    }
    static func cannot(_ verb: String, gid: String) -> Aria2Error { Aria2Error(1, "GID#\(gid) cannot be \(verb) now") }

    /// `{"code": …, "message": …}`.
    var value: RPCValue { .object(["code": .int(Int64(code)), "message": .string(message)]) }
}
