import FerryCore
import FerryHTTP
import FerryStore

/// A request the API refuses, with the stable code API.md names.
///
/// This is the one place where Ferry's failures become HTTP statuses: controllers throw `APIError`
/// (or errors converted by `APIError.init(_:)`), and the router turns it into the JSON error body.
public struct APIError: Error, HTTPResponseError, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidURL = "invalid_url"
        case unsupportedScheme = "unsupported_scheme"
        case forbiddenDestination = "forbidden_destination"
        case unauthorized
        case forbidden
        case notFound = "not_found"
        case gone
        case methodNotAllowed = "method_not_allowed"
        case conflict
        case payloadTooLarge = "payload_too_large"
        case unsupportedMediaType = "unsupported_media_type"
        case rateLimited = "rate_limited"
        case unavailable
        case quotaExceeded = "quota_exceeded"
        case `internal`
    }

    public let code: Code
    public let message: String
    public var headers: HTTPHeaders = [:]

    public init(_ code: Code, _ message: String, headers: HTTPHeaders = [:]) {
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The HTTP status for each code (API.md, "Errors").
    public var status: HTTPStatus {
        switch code {
        case .invalidRequest, .invalidURL, .unsupportedScheme: .badRequest
        case .forbiddenDestination, .forbidden: .forbidden
        case .unauthorized: .unauthorized
        case .notFound: .notFound
        case .gone: .gone
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .payloadTooLarge: .payloadTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .quotaExceeded: HTTPStatus(code: 507)
        case .internal: .internalServerError
        }
    }

    public func response(for request: HTTPRequest) -> HTTPResponse {
        errorResponse(status, code: code.rawValue, message: message, headers: headers)
    }

    // MARK: Conversions from other layers' errors

    init(_ problem: URLProblem) {
        switch problem {
        case .invalid(let why): self.init(.invalidURL, why)
        case .unsupportedScheme(let scheme):
            self.init(.unsupportedScheme, "'\(scheme)' URLs are not accepted here: a job downloads from http, https, ftp, ftps or sftp; webhooks and deliveries take http or https")
        }
    }

    /// A store failure: the request could not be made durable.
    static func store(_ error: any Error) -> APIError {
        APIError(.unavailable, "the job store failed: \(error)")
    }

    static func jobNotFound(_ id: String) -> APIError { APIError(.notFound, "no job with id '\(id)'") }

    public static func == (a: APIError, b: APIError) -> Bool { a.code == b.code && a.message == b.message }
}
