import ArgumentParser
import FerryClient
import Foundation

/// `--server` and `--token`, shared by every client subcommand; `FERRY_URL` and `FERRY_TOKEN` are their twins.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("server"), help: "Ferry's URL (FERRY_URL; default \(ServerEndpoint.defaultURL)).")
    var server: String?

    @Option(help: "API token, sent as a bearer token (FERRY_TOKEN).")
    var token: String?

    /// The API of the Ferry these options name.
    func api() throws(ClientError) -> FerryAPI {
        let endpoint = try ServerEndpoint.resolve(
            server: server, token: token, environment: ProcessInfo.processInfo.environment)
        return try FerryAPI(endpoint: endpoint)
    }
}
