import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation
import Logging

/// The HTTP edge of the service as it is assembled at start: the server with `AccessGuard` in front of the router,
/// and the fallback that serves the page. Here (in API/) because refusals become HTTP statuses.
extension RunningService {
    /// The HTTP server (not started yet): `AccessGuard` first, then the router.
    static func makeServer(configuration: ServiceConfiguration, logger: Logger, router: Router,
                                   access: AccessGuard, metrics: ServiceMetrics) -> HTTPServer {
        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        // Event streams are long-lived connections: allow as many as the descriptor limit (raised to
        // its hard maximum) leaves room for, beside downloads, spool files and the store.
        serverConfiguration.maxConnections = max(1024, raiseDescriptorLimit() - 1024)
        // The refusal when `AccessGuard` turns the request away, else whose jobs it may see (`JobAccess`, resolved
        // once here and bound around the route as `JobAccess.current`).
        let decide: @Sendable (HTTPRequest) -> GuardDecision = { request in
            switch Result(catching: { () throws(APIError) in try access.check(request) }) {
            case .success(let credential): return .proceed(JobAccess(principal: credential.principal))
            case .failure(let refusal):
                metrics.request(route: "auth", method: request.method.rawValue, status: refusal.status.code)
                return .refuse(refusal.response(for: request))
            }
        }
        // On the connection queue, once per request: `/healthz`, the guard's decision and the route. Refusals,
        // immediate routes (snapshot reads) and the router's 404/405 are answered at once; the other routes run on
        // the concurrency pool with the access decided here bound again around them.
        let health = OperationsController.immediate(metrics: metrics)
        return HTTPServer(configuration: serverConfiguration, logger: logger) { request in
            if let response = health(request) { return .now(response) }
            switch decide(request) {
            case .refuse(let refusal):
                return .now(refusal)
            case .proceed(let jobs):
                switch JobAccess.$current.withValue(jobs, operation: { router.answer(request) }) {
                case .now(let response): return .now(response)
                case .later(let work): return .later { await JobAccess.$current.withValue(jobs) { await work() } }
                }
            }
        }
    }

    /// Serves `Public/` for paths no route takes; anything else there is `404 not_found`.
    static func staticFallback(_ files: StaticFiles) -> @Sendable (HTTPRequest) async throws -> HTTPResponse {
        { request in
            if let response = await files.handle(request) { return response }
            throw APIError(.notFound, "nothing at \(request.path)")
        }
    }
}

/// What `AccessGuard` decided about a request: its refusal, or whose jobs it may see.
private enum GuardDecision: Sendable {
    case refuse(HTTPResponse)
    case proceed(JobAccess)
}
