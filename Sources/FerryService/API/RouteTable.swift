import FerryHTTP

/// The router plus the per-route request counter: every route registered here is counted in
/// `/metrics` by its pattern, method and final status.
struct RouteTable: Sendable {
    let router: Router
    let metrics: ServiceMetrics

    func add(_ method: HTTPMethod, _ pattern: String,
             _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        let metrics = metrics
        router.add(method, pattern) { request in
            do {
                let response = try await handler(request)
                metrics.request(route: pattern, method: request.method.rawValue, status: response.status.code)
                return response
            } catch {
                metrics.request(route: pattern, method: request.method.rawValue, status: Self.status(of: error))
                throw error
            }
        }
    }

    /// The status a failed handler counts as in the metrics: an `APIError`'s own (a supervisor's refusal as its
    /// `APIError`), anything else 500.
    private static func status(of error: any Error) -> Int {
        if let error = error as? APIError { return error.status.code }
        if let error = error as? JobsError { return APIError(error).status.code }
        return 500
    }

    /// Adds a route answered on the connection queue (`Router.addImmediate`): the handler must not
    /// block or wait for an actor; it may read state kept readable from any thread under a lock.
    func addImmediate(_ method: HTTPMethod, _ pattern: String,
                      _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        let metrics = metrics
        router.addImmediate(method, pattern) { request in
            do {
                let response = try handler(request)
                metrics.request(route: pattern, method: request.method.rawValue, status: response.status.code)
                return response
            } catch {
                metrics.request(route: pattern, method: request.method.rawValue, status: Self.status(of: error))
                throw error
            }
        }
    }
}
