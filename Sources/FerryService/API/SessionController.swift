import FerryHTTP

/// `POST /api/v1/session` (log in with the token, get the page's cookie) and `DELETE` (log out: answered
/// once the logout is durable, so the cookie stays refused after a restart; `503` when it could not be saved).
struct SessionController: Sendable {
    let access: AccessGuard

    struct Body: Decodable { var token: String? }

    func register(_ routes: RouteTable) {
        routes.add(.POST, "/api/v1/session", login)
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

    func logout(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await access.logout(request)
        var response = HTTPResponse(status: .noContent)
        response.headers["Set-Cookie"] = SessionCookie.clearCookieHeader
        return response
    }
}
