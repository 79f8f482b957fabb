/// Why a request was rejected by the parser. Each maps to one HTTP status; the connection closes after answering.
public struct RequestParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case badRequest            // 400
        case uriTooLong            // 414
        case headerFieldsTooLarge  // 431
        case payloadTooLarge       // 413
        case expectationFailed     // 417
        case notImplemented        // 501
        case versionNotSupported   // 505
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var statusCode: Int {
        switch kind {
        case .badRequest: return 400
        case .uriTooLong: return 414
        case .headerFieldsTooLarge: return 431
        case .payloadTooLarge: return 413
        case .expectationFailed: return 417
        case .notImplemented: return 501
        case .versionNotSupported: return 505
        }
    }

    /// The `error.code` of the JSON error body (API.md).
    public var code: String {
        switch kind {
        case .badRequest: return "invalid_request"
        case .uriTooLong: return "uri_too_long"
        case .headerFieldsTooLarge: return "header_fields_too_large"
        case .payloadTooLarge: return "payload_too_large"
        case .expectationFailed: return "expectation_failed"
        case .notImplemented: return "not_implemented"
        case .versionNotSupported: return "http_version_not_supported"
        }
    }

    public var description: String { "\(statusCode) \(code): \(message)" }
}
