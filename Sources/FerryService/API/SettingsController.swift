import FerryHTTP

/// `GET`/`PATCH /api/v1/settings`: the speed limit over all downloads and how many run at once, changed at runtime
/// and kept across restarts. Stateless: `LiveSettings` owns the values.
struct SettingsController: Sendable {
    let settings: LiveSettings

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/api/v1/settings", show)
        routes.add(.PATCH, "/api/v1/settings", change)
    }

    func show(_ request: HTTPRequest) async throws -> HTTPResponse {
        Self.render(await settings.current)
    }

    func change(_ request: HTTPRequest) async throws -> HTTPResponse {
        // The whole service's settings: the administrator's and admin keys', not a client key's.
        guard JobAccess.current.managesKeys else {
            throw APIError(.forbidden, "only the administrator's token and admin keys change the settings")
        }
        let change = try RequestDecoding.decode(SettingsBody.self, from: request.body).validated()
        do {
            return Self.render(try await settings.change(change))
        } catch {
            throw APIError(.unavailable, error.description)
        }
    }

    /// `{"maxBytesPerSecond": int or null, "maxConcurrent": int}`.
    static func render(_ settings: RuntimeSettings) -> HTTPResponse {
        var json = JSONWriter()
        json.beginObject()
        json.field("maxBytesPerSecond", settings.maxBytesPerSecond)
        json.field("maxConcurrent", settings.maxConcurrent)
        json.endObject()
        var response = HTTPResponse.json(.ok, json.bytes)
        response.headers["Cache-Control"] = "no-store"
        return response
    }
}
