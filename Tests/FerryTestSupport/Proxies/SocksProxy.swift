import Foundation

/// A SOCKS5 proxy (`Tests/Fixtures/socks5_proxy.py`, standard-library Python) on a free 127.0.0.1 port for one
/// test, optionally with a user name and password. It logs every `CONNECT` it is asked for (`requests()`): the
/// address type the client sent (an IPv4 or IPv6 address, or a domain name the proxy would have to resolve), host
/// and port. It relays only to 127.0.0.1; anything else is answered "not allowed" and logged as not granted.
///
/// Stop it with `stop()` in a `defer`: SIGTERM to its pid, its directory removed.
public final class SocksProxy: @unchecked Sendable {
    /// One `CONNECT` the proxy was asked for.
    public struct Request: Decodable, Sendable, Equatable {
        /// `ipv4`, `ipv6` or `domain`.
        public let atyp: String
        public let host: String
        public let port: Int
        public let user: String?
        public let granted: Bool
    }

    public let port: Int
    public let directory: String
    private let process: ChildProcess

    private init(port: Int, directory: String, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// `socks5h://[user:password@]127.0.0.1:port`.
    public func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "socks5h://\(credentials)127.0.0.1:\(port)"
    }

    /// Every `CONNECT` asked for so far, in order.
    public func requests() -> [Request] {
        ChildProcess.readText(directory + "/connects.log").split(separator: "\n").compactMap {
            try? JSONDecoder().decode(Request.self, from: Data($0.utf8))
        }
    }

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/socks5_proxy.py").path
    }

    public static func start(user: String? = nil, password: String? = nil) async throws -> SocksProxy {
        let python = try FaultOrigin.pythonPath()
        let directory = try Fixture.tempDirectory("ferry-socks")
        var arguments = ["-u", scriptPath, "--port-file", directory + "/port", "--log", directory + "/connects.log", "--exit-with-parent"]
        if let user { arguments += ["--user", user, "--password", password ?? ""] }
        let process: ChildProcess
        do {
            process = try ChildProcess.launch(python, arguments, outputDirectory: directory)
        } catch {
            Fixture.removeTree(directory)
            throw error
        }
        let port = try await process.awaitPortFile(directory + "/port", what: "SOCKS5 proxy (\(scriptPath))", hint: "", directory: directory)
        return SocksProxy(port: port, directory: directory, process: process)
    }

    /// Stops the proxy by pid (SIGTERM now, SIGKILL after 2 s on a thread of its own), then removes its directory.
    /// Returns at once.
    public func stop() {
        let directory = directory
        process.stopInBackground(grace: 2) { Fixture.removeTree(directory) }
    }
}
