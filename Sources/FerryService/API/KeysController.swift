import FerryHTTP
import FerryStore
import Foundation

/// `/api/v1/keys` and `/api/v1/keys/{id}` (API.md, "API keys"): make, list, read, change and revoke API keys. Only
/// the administrator and `admin` keys (`JobAccess.managesKeys`); anyone else is `403`. Stateless: `KeyDirectory`
/// keeps the keys.
struct KeysController: Sendable {
    let keys: KeyDirectory
    /// Whether keys can be used at all (a token is configured: keys sit beside the administrator's).
    let enabled: Bool

    func register(_ routes: RouteTable) {
        routes.add(.POST, "/api/v1/keys", create)
        routes.add(.GET, "/api/v1/keys", list)
        routes.add(.GET, "/api/v1/keys/:id", show)
        routes.add(.PATCH, "/api/v1/keys/:id", change)
        routes.add(.DELETE, "/api/v1/keys/:id", revoke)
    }

    func create(_ request: HTTPRequest) async throws -> HTTPResponse {
        try requireManager()
        guard enabled else { throw APIError(.conflict, "API keys need the administrator's --token; this Ferry has none") }
        let body = try RequestDecoding.decode(KeyBody.self, from: request.body)
        guard let name = body.name else { throw APIError(.invalidRequest, "'name' is required") }
        let scope = try KeyBody.validScope(body.scope ?? "write")
        let limits = try body.limits?.applied(to: APIKeyRecord.Limits()) ?? APIKeyRecord.Limits()
        let made: (key: APIKeyRecord, token: String)
        do { made = try await keys.create(name: try KeyBody.validName(name), scope: scope, limits: limits) } catch let error as APIError {
            throw error
        } catch { throw APIError.store(error) }
        var response = HTTPResponse.json(.created, Self.render(made.key, token: made.token))
        response.headers["Location"] = "/api/v1/keys/\(made.key.id)"
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        try requireManager()
        let all: [APIKeyRecord]
        do { all = try await keys.all() } catch { throw APIError.store(error) }
        var json = JSONWriter(capacity: 256 * all.count + 16)
        json.beginObject()
        json.key("keys")
        json.beginArray()
        for key in all { Self.write(key, token: nil, into: &json) }
        json.endArray()
        json.endObject()
        return .json(.ok, json.bytes)
    }

    func show(_ request: HTTPRequest) async throws -> HTTPResponse {
        try requireManager()
        return .json(.ok, Self.render(try found(request), token: nil))
    }

    func change(_ request: HTTPRequest) async throws -> HTTPResponse {
        try requireManager()
        var key = try found(request)
        let body = try RequestDecoding.decode(KeyBody.self, from: request.body)
        guard body.name != nil || body.scope != nil || body.limits != nil else {
            throw APIError(.invalidRequest, "nothing to change: give 'name', 'scope' or 'limits'")
        }
        if let name = body.name { key.name = try KeyBody.validName(name) }
        if let scope = body.scope { key.scope = try KeyBody.validScope(scope) }
        if let limits = body.limits { key.limits = try limits.applied(to: key.limits) }
        do { try await keys.update(key) } catch JobStoreError.notFound {
            throw Self.notFound(key.id)
        } catch { throw APIError.store(error) }
        return .json(.ok, Self.render(key, token: nil))
    }

    func revoke(_ request: HTTPRequest) async throws -> HTTPResponse {
        try requireManager()
        let id = request.pathParameters["id"] ?? ""
        let existed: Bool
        do { existed = try await keys.revoke(id: id) } catch { throw APIError.store(error) }
        guard existed else { throw Self.notFound(id) }
        return HTTPResponse(status: .noContent)
    }

    // MARK: Helpers

    private func requireManager() throws(APIError) {
        guard JobAccess.current.managesKeys else {
            throw APIError(.forbidden, "only the administrator's token and admin keys manage keys")
        }
    }

    private func found(_ request: HTTPRequest) throws(APIError) -> APIKeyRecord {
        let id = request.pathParameters["id"] ?? ""
        guard let key = keys.key(id: id) else { throw Self.notFound(id) }
        return key
    }

    static func notFound(_ id: String) -> APIError { APIError(.notFound, "no key with id '\(id)'") }

    static func render(_ key: APIKeyRecord, token: String?) -> [UInt8] {
        var json = JSONWriter(capacity: 320)
        write(key, token: token, into: &json)
        return json.bytes
    }

    /// A key as API.md shows it: never its digest; its token only in the answer that made it.
    static func write(_ key: APIKeyRecord, token: String?, into json: inout JSONWriter) {
        json.beginObject()
        json.field("id", key.id)
        json.field("name", key.name)
        json.field("scope", key.scope.rawValue)
        json.key("limits")
        json.beginObject()
        json.field("maxActiveJobs", key.limits.maxActiveJobs)
        json.field("maxJobs", key.limits.maxJobs)
        json.field("maxBytesPerSecond", key.limits.maxBytesPerSecond)
        json.field("bytesPerDay", key.limits.bytesPerDay)
        json.field("spoolBytes", key.limits.spoolBytes)
        json.endObject()
        json.field("createdAt", timestamp: key.createdAt)
        json.field("lastUsedAt", timestamp: key.lastUsedAt)
        if let token { json.field("token", token) }
        json.endObject()
    }
}
