/// Dispatches requests to handlers by method and path pattern.
///
/// Build it once (`add`, `fallback`) before serving; it is then only read, from any task (hence `@unchecked
/// Sendable`: configuration after the server started is a data race).
/// - Patterns: literal segments, `:name` (one non-empty segment), `*name` (the rest of the path, last only). The most
///   specific matching pattern wins (literal over parameter over rest, segment by segment).
/// - HEAD is answered by the GET handler wherever no HEAD route exists (the server omits the body).
/// - No pattern matches: `fallback`, else 404 `not_found`. Patterns match but not for this method: 405
///   `method_not_allowed` with `Allow`.
/// - A thrown `HTTPResponseError` answers with its response; any other error with 500 `internal`.
public final class Router: @unchecked Sendable {
    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: RoutePattern
        let handler: @Sendable (HTTPRequest) async throws -> HTTPResponse
    }

    private var routes: [Route] = []

    /// Called when no pattern matches the path (e.g. static files). Set before serving.
    public var fallback: (@Sendable (HTTPRequest) async throws -> HTTPResponse)?

    public init() {}

    public func add(_ method: HTTPMethod, _ pattern: String,
                    _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        routes.append(Route(method: method, pattern: RoutePattern(pattern), handler: handler))
    }

    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let segments = request.rawPath.hasPrefix("/")
            ? request.rawPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            : []
        var allowed: Set<HTTPMethod> = []
        var best: (route: Route, parameters: [String: String], exact: Bool)?
        for route in routes {
            guard let parameters = route.pattern.match(segments) else { continue }
            allowed.insert(route.method)
            let exact = route.method == request.method
            guard exact || (request.method == .HEAD && route.method == .GET) else { continue }
            if let current = best {
                if current.exact && !exact { continue }
                if current.exact == exact && !route.pattern.isMoreSpecific(than: current.route.pattern) { continue }
            }
            best = (route, parameters, exact)
        }
        var request = request
        if let best {
            request.pathParameters = best.parameters
            request.routePattern = best.route.pattern.text
            return await Self.run(best.route.handler, request)
        }
        if !allowed.isEmpty {
            if allowed.contains(.GET) { allowed.insert(.HEAD) }
            let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            return errorResponse(.methodNotAllowed, code: "method_not_allowed",
                                 message: "\(request.method.rawValue) is not allowed here; use \(allow).",
                                 headers: ["Allow": allow])
        }
        if let fallback {
            return await Self.run(fallback, request)
        }
        return errorResponse(.notFound, code: "not_found", message: "Nothing here: \(request.path)")
    }

    static func run(_ handler: @Sendable (HTTPRequest) async throws -> HTTPResponse, _ request: HTTPRequest) async -> HTTPResponse {
        do {
            return try await handler(request)
        } catch let error as HTTPResponseError {
            return error.response(for: request)
        } catch {
            return errorResponse(.internalServerError, code: "internal", message: "Internal error.")
        }
    }
}
