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
        // The refusal when `AccessGuard` turns the request away, nil when it may proceed.
        let refusal: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
            switch Result(catching: { () throws(APIError) in try access.check(request) }) {
            case .success: return nil
            case .failure(let refusal):
                metrics.request(route: "auth", method: request.method.rawValue, status: refusal.status.code)
                return refusal.response(for: request)
            }
        }
        // On the connection queue: `/healthz`, refusals, immediate routes (snapshot reads) and the router's
        // 404/405 are answered at once; everything else goes to the async handler on the concurrency pool.
        let health = OperationsController.immediate(metrics: metrics)
        let immediate: ImmediateResponder = { request in
            if let response = health(request) { return response }
            if let response = refusal(request) { return response }
            return router.respondImmediately(request)
        }
        return HTTPServer(configuration: serverConfiguration, logger: logger, immediate: immediate) { request in
            if let response = refusal(request) { return response }
            return await router.handle(request)
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
