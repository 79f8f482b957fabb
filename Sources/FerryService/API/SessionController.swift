import FerryHTTP

/// `POST /api/v1/session` (log in with the token or the read token, get the page's cookie), `GET` (what the
/// request's credentials may do, so the page can show a read-only view) and `DELETE` (log out: answered once the
/// logout is durable, so the cookie stays refused after a restart; `503` when it could not be saved).
struct SessionController: Sendable {
    let access: AccessGuard

    struct Body: Decodable { var token: String? }

    func register(_ routes: RouteTable) {
        routes.add(.POST, "/api/v1/session", login)
        routes.add(.GET, "/api/v1/session", show)
        routes.add(.DELETE, "/api/v1/session", logout)
    }

    func login(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try RequestDecoding.decode(Body.self, from: request.body)
        guard let token = body.token else { throw APIError(.invalidRequest, "'token' is required") }
        if access.isOpen { return HTTPResponse(status: .noContent) }
        guard let cookie = access.login(token: token) else {
            throw AccessGuard.unauthorized("the token is not valid")
        }
        var response = HTTPResponse(status: .noContent)
        response.headers["Set-Cookie"] = cookie
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// `{"access": "full" | "read-only", "key": name or null, "managesKeys": bool}` for the request's credentials
    /// (`full` when the API is open); `401` without valid ones. The path needs no credentials to log in, so this
    /// handler authenticates itself.
    func show(_ request: HTTPRequest) async throws -> HTTPResponse {
        let credential = try access.authenticate(request)
        let jobs = JobAccess(principal: credential.principal)
        var json = JSONWriter()
        json.beginObject()
        json.field("access", credential.access.rawValue)
        if case .key(let key) = credential.principal { json.field("key", key.name) } else { json.field("key", nil as String?) }
        json.field("managesKeys", jobs.managesKeys && !access.isOpen)
        json.endObject()
        var response = HTTPResponse.json(.ok, json.bytes)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    func logout(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await access.logout(request)
        var response = HTTPResponse(status: .noContent)
        response.headers["Set-Cookie"] = SessionCookie.clearCookieHeader
        return response
    }
}
