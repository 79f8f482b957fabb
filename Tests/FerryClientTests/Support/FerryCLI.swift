import FerryTestSupport
import Foundation

/// The `ferry` client subcommands pointed at one Ferry (`--server`, and `--token` when it has one), and a
/// direct HTTP view of that Ferry for checking what the commands did.
struct FerryCLI: Sendable {
    let ferry: InProcessFerry

    /// Runs `ferry <subcommand> <arguments> --server URL [--token T]`.
    func run(_ arguments: [String], directory: String? = nil, timeout: Double = 60) async throws -> CommandResult {
        try await runFerry(arguments + connectionArguments, directory: directory, timeout: timeout)
    }

    /// Starts a long-running client command (`watch`); the caller stops it.
    func launch(_ arguments: [String]) throws -> ChildProcess {
        try launchFerry(arguments + connectionArguments)
    }

    var connectionArguments: [String] {
        ["--server", ferry.url] + (ferry.token.map { ["--token", $0] } ?? [])
    }

    /// `ferry add URL` and the new job's id.
    func add(_ url: String, _ options: [String] = []) async throws -> String {
        let result = try await run(["add", url] + options)
        guard result.status == 0, let id = result.lines.first, !id.isEmpty else {
            throw HarnessError("ferry add \(url) failed: \(result)")
        }
        return id
    }

    // MARK: Direct HTTP (blocking calls, made off the pool)

    /// `GET path` straight to Ferry.
    func get(_ path: String, method: String = "GET") async throws -> LoopbackResponse {
        let port = ferry.port
        var headers: [(String, String)] = [("Connection", "close")]
        if let token = ferry.token { headers.append(("Authorization", "Bearer \(token)")) }
        let sent = headers
        return try await offThePool { try LoopbackConnection.fetch(port: port, path, method: method, headers: sent) }
    }

    /// The job object, straight from the API.
    func job(_ id: String) async throws -> [String: Any] {
        let response = try await get("/api/v1/jobs/\(id)")
        guard response.status == 200,
              let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        else { throw HarnessError("GET job \(id): \(response.status) \(response.text.prefix(300))") }
        return object
    }

    /// Polls the job until `condition` holds.
    @discardableResult
    func waitForJob(_ id: String, timeout: Double = 30, _ condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: Any] = [:]
        while Date() < deadline {
            last = try await job(id)
            if condition(last) { return last }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw HarnessError("job \(id) never matched; last: \(last)")
    }

    /// The value of `ferry_http_requests_total` for a route, method and status (0 when absent).
    func requestCount(route: String, method: String, status: Int) async throws -> Int {
        let text = try await get("/metrics").text
        let key = #"ferry_http_requests_total{route="\#(route)",method="\#(method)",status="\#(status)"} "#
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return 0 }
        return Int(Double(line.dropFirst(key.count).trimmingCharacters(in: .whitespaces)) ?? 0)
    }
}

/// A file of `size` deterministic bytes in the origin's root, and its SHA-256.
func originFile(_ origin: NginxOrigin, _ name: String, size: Int, seed: Int) throws -> String {
    try Fixture.writeFile(at: origin.root + "/" + name, size: size, seed: seed)
    return try Fixture.sha256Hex(ofFile: origin.root + "/" + name)
}
