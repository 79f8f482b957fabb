/// `GET /healthz` of one service, with a deadline: what `ferry health` (the Docker `HEALTHCHECK`) runs.
///
/// The probe goes straight to the service, never through a proxy, and needs no token (`/healthz` is open).
public struct HealthCheck: Sendable {
    public let target: HealthTarget
    /// Longest the probe may take in all, connecting included.
    public let timeout: Double

    public init(target: HealthTarget, timeout: Double) {
        self.target = target
        self.timeout = timeout
    }

    /// Asks once and judges the answer; a connection refused, a timeout or a reset is `.unhealthy` too.
    public func run() -> HealthVerdict {
        do {
            let endpoint = try ServerEndpoint(baseURL: target.baseURL, token: nil)
            let session = try CurlSession(endpoint: endpoint, direct: true)
            let response = try session.send(ClientRequest("GET", HealthTarget.path, patience: .probe(seconds: timeout)))
            return .answer(status: response.status, from: target.url)
        } catch {
            return .unhealthy(error.description)
        }
    }
}
