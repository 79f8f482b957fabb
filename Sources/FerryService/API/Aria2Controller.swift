import FerryCore
import FerryHTTP
import Foundation

/// `/jsonrpc`: aria2's JSON-RPC over HTTP (`POST` with one call or a batch, `GET` with base64 params), an adapter over
/// the job operations the REST API uses (`Aria2Dispatcher`). Credentials are judged per call (`Aria2Authorization`),
/// so `AccessGuard.check` lets `/jsonrpc` through; an open service still answers loopback `Host`s only.
/// Stateless.
struct Aria2Controller: Sendable {
    static let path = "/jsonrpc"

    let dispatcher: Aria2Dispatcher
    let access: AccessGuard
    let notifier: Aria2Notifier

    init(supervisor: JobSupervisor, settings: LiveSettings, access: AccessGuard, destinations: AddressPolicy,
         directory: String, hub: EventHub) {
        let queries = Aria2Queries(supervisor: supervisor, settings: settings, status: Aria2Status(directory: directory),
                                   sessionID: Aria2Dispatcher.newSessionID())
        dispatcher = Aria2Dispatcher(queries: queries, actions: Aria2Actions(queries: queries, destinations: destinations))
        self.access = access
        notifier = Aria2Notifier(hub: hub, owner: { [supervisor] id in supervisor.peek(id)?.0.ownerKey })
    }

    func register(_ routes: RouteTable) {
        routes.add(.POST, Self.path, post)
        routes.add(.GET, Self.path, get)
    }

    func post(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorization = try authorization(for: request)
        let (outcome, bytes) = await dispatcher.respond(to: request.body, authorization: authorization)
        switch outcome {
        case .parseError: return Self.answer(.internalServerError, bytes)
        case .single(failure: let error?): return Self.answer(Self.status(of: error), bytes)
        case .single(failure: nil), .batch: return Self.answer(.ok, bytes)
        }
    }

    func get(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorization = try authorization(for: request)
        if WebSocketHandshake.isUpgrade(request) { return try socket(request, authorization: authorization) }
        var json = JSONWriter()
        guard let call = Aria2Dispatcher.call(method: request.queryValue("method"), id: request.queryValue("id"),
                                              params: request.queryValue("params")) else {
            Aria2Dispatcher.write(id: .null, .failure(.invalidRequest), into: &json)
            return Self.answer(.badRequest, json.bytes)
        }
        let result = await dispatcher.answer(call, authorization: authorization)
        Aria2Dispatcher.write(id: call.id, result, into: &json)
        if case .failure(let error) = result { return Self.answer(Self.status(of: error), json.bytes) }
        return Self.answer(.ok, json.bytes)
    }

    /// The status aria2 1.36 answers a failed call with: 500 for a parse error or invalid params, else 400.
    static func status(of error: Aria2Error) -> HTTPStatus {
        error == .parse || error == .invalidParams ? .internalServerError : .badRequest
    }

    /// A WebSocket of calls and notifications (`Aria2Socket`). Refused with `403` from another site's page when no
    /// token is configured (no secret could show the caller may).
    func socket(_ request: HTTPRequest, authorization: Aria2Authorization) throws(APIError) -> HTTPResponse {
        if let refusal = WebSocketHandshake.refusal(request) { throw APIError(.invalidRequest, refusal) }
        if authorization.isOpen, authorization.crossSite {
            throw APIError(.forbidden, "cross-site WebSockets are refused while no token is configured")
        }
        return Aria2Socket(dispatcher: dispatcher, notifier: notifier, authorization: authorization).response(for: request)
    }

    /// What the request's credentials allow its calls; an open service refuses a `Host` that is not this machine
    /// (`403`, as the REST API does, against DNS rebinding).
    func authorization(for request: HTTPRequest) throws(APIError) -> Aria2Authorization {
        if access.isOpen { try access.checkLoopbackHost(request) }
        var bearer: AccessGuard.Credential?
        if let header = request.headers["Authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                bearer = access.credential(ofSecret: parts[1].trimmingCharacters(in: .whitespaces))
            }
        }
        return Aria2Authorization(isOpen: access.isOpen, crossSite: AccessGuard.isCrossSite(request), bearer: bearer,
                                  credentialOfSecret: { [access] in access.credential(ofSecret: $0) })
    }

    /// aria2's answers are `application/json-rpc`, never cached.
    static func answer(_ status: HTTPStatus, _ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json-rpc", "Cache-Control": "no-store"],
                     body: .bytes(bytes))
    }
}
