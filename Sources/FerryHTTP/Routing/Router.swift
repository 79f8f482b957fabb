/// Dispatches requests to handlers by method and path pattern.
///
/// Build it once (`add`, `fallback`) before serving; it is then only read, from any task or queue (hence
/// `@unchecked Sendable`: configuration after the server started is a data race).
/// - Patterns: literal segments, `:name` (one non-empty segment), `*name` (the rest of the path, last only). The most
///   specific matching pattern wins (literal over parameter over rest, segment by segment).
/// - HEAD is answered by the GET handler wherever no HEAD route exists (the server omits the body).
/// - No pattern matches: `fallback`, else 404 `not_found`. Patterns match but not for this method: 405
///   `method_not_allowed` with `Allow`.
/// - A thrown `HTTPResponseError` answers with its response; any other error with 500 `internal`.
/// - Immediate routes (`addImmediate`) have a synchronous handler that must not block (e.g. it reads a
///   snapshot under a lock); `answer` answers them, and the router's own 404/405, on the caller's thread (a
///   connection queue), so the request costs no hop to the concurrency pool. A request is resolved once.
/// - Matching reads the raw path's bytes in place; only the chosen route's parameters are decoded into strings.
public final class Router: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse
    public typealias ImmediateHandler = @Sendable (HTTPRequest) throws -> HTTPResponse

    enum Action: Sendable {
        case later(Handler)
        case immediate(ImmediateHandler)
    }

    /// A class, so that scanning the table for a match copies no patterns.
    final class Route: Sendable {
        let method: HTTPMethod
        let pattern: RoutePattern
        let action: Action

        init(method: HTTPMethod, pattern: RoutePattern, action: Action) {
            self.method = method
            self.pattern = pattern
            self.action = action
        }
    }

    /// What a request resolves to.
    enum Resolution {
        /// A route, with the request carrying its parameters and pattern.
        case route(Route, HTTPRequest)
        /// The router's own answer (404, 405).
        case answer(HTTPResponse)
        /// No pattern matches and a fallback is set.
        case fallback
    }

    private var routes: [Route] = []

    /// Called when no pattern matches the path (e.g. static files). Set before serving.
    public var fallback: Handler?

    public init() {}

    public func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, pattern: RoutePattern(pattern), action: .later(handler)))
    }

    /// Adds a route whose handler answers synchronously, without blocking (see the type's comment).
    /// (A separate name, so that a synchronous closure given to `add` never becomes one by overload resolution.)
    public func addImmediate(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping ImmediateHandler) {
        routes.append(Route(method: method, pattern: RoutePattern(pattern), action: .immediate(handler)))
    }

    /// Every route added, as (method, pattern) in the order added: what a test walks to check each one.
    public var registeredRoutes: [(method: HTTPMethod, pattern: String)] {
        routes.map { ($0.method, $0.pattern.text) }
    }

    /// Resolves the request once and answers it: immediate routes and the router's own 404/405 now (on the
    /// caller's thread; never blocks), async routes and the fallback later, with the route already chosen.
    public func answer(_ request: HTTPRequest) -> HTTPAnswer {
        switch resolve(request) {
        case .route(let route, let request):
            switch route.action {
            case .later(let handler): return .later { await Self.run(handler, request) }
            case .immediate(let handler): return .now(Self.run(handler, request))
            }
        case .answer(let response):
            return .now(response)
        case .fallback:
            guard let fallback else { return .now(Self.notFound(request)) }
            return .later { await Self.run(fallback, request) }
        }
    }

    /// The request's response, whichever way `answer` gives it.
    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        switch answer(request) {
        case .now(let response): return response
        case .later(let work): return await work()
        }
    }

    func resolve(_ request: HTTPRequest) -> Resolution {
        let method = request.method
        let found: (route: Route, parameters: [String: String])?? = PathSegments.with(request.rawPath) { path in
            var best: Route?
            var bestExact = false
            var anyMatch = false
            for route in routes where route.pattern.matches(path) {
                anyMatch = true
                let exact = route.method == method
                guard exact || (method == .HEAD && route.method == .GET) else { continue }
                if let current = best {
                    if bestExact && !exact { continue }
                    if bestExact == exact && !route.pattern.isMoreSpecific(than: current.pattern) { continue }
                }
                best = route
                bestExact = exact
            }
            if let best { return (best, best.pattern.parameters(path)) }
            return anyMatch ? .some(nil) : nil
        }
        switch found {
        case .some(.some(let match)):
            var request = request
            request.pathParameters = match.parameters
            request.routePattern = match.route.pattern.text
            return .route(match.route, request)
        case .some(.none):
            return .answer(methodNotAllowed(request))
        case .none:
            return fallback == nil ? .answer(Self.notFound(request)) : .fallback
        }
    }

    /// 405 with `Allow`: the methods of every route whose pattern matches (HEAD wherever GET is).
    private func methodNotAllowed(_ request: HTTPRequest) -> HTTPResponse {
        var allowed: Set<HTTPMethod> = PathSegments.with(request.rawPath) { path in
            Set(routes.lazy.filter { $0.pattern.matches(path) }.map(\.method))
        }
        if allowed.contains(.GET) { allowed.insert(.HEAD) }
        let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
        return errorResponse(.methodNotAllowed, code: "method_not_allowed",
                             message: "\(request.method.rawValue) is not allowed here; use \(allow).",
                             headers: ["Allow": allow])
    }

    private static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        errorResponse(.notFound, code: "not_found", message: "Nothing here: \(request.path)")
    }

    static func run(_ handler: Handler, _ request: HTTPRequest) async -> HTTPResponse {
        do {
            return try await handler(request)
        } catch {
            return answer(error, request)
        }
    }

    static func run(_ handler: ImmediateHandler, _ request: HTTPRequest) -> HTTPResponse {
        do {
            return try handler(request)
        } catch {
            return answer(error, request)
        }
    }

    private static func answer(_ error: any Error, _ request: HTTPRequest) -> HTTPResponse {
        if let error = error as? HTTPResponseError { return error.response(for: request) }
        return errorResponse(.internalServerError, code: "internal", message: "Internal error.")
    }
}
