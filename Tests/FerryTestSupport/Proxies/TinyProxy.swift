import Foundation

/// Debian's `tinyproxy`, started by a test on a free 127.0.0.1 port with its own configuration, log and pid in a
/// temporary directory, in the foreground (`-d`), stopped by pid with `stop()`. Optional basic-auth credentials.
/// Logs every `CONNECT` at level Info (`log()`), so a test sees where the proxy was asked to connect.
public final class TinyProxy: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private let process: ChildProcess

    private init(port: Int, directory: String, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// `http://[user:password@]127.0.0.1:port`.
    public func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)"
    }

    /// What tinyproxy logged so far.
    public func log() -> String { ChildProcess.readText(directory + "/tinyproxy.log") }

    /// The `CONNECT` targets it was asked for, in order (`127.0.0.1:8080`).
    public func connectTargets() -> [String] {
        log().split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): CONNECT ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }

    public static func start(user: String? = nil, password: String? = nil) async throws -> TinyProxy {
        guard let executable = ExecutableSearch.find("tinyproxy", candidates: ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"]) else {
            throw FixtureError.startFailed("tinyproxy", detail: "tinyproxy not found: install it with `apt-get install tinyproxy`")
        }
        var lastError: Error = FixtureError.startFailed("tinyproxy", detail: "no attempt made")
        for _ in 0..<5 {
            let directory = try Fixture.tempDirectory("ferry-tinyproxy")
            let port = try LoopbackSocket.freePort()
            var configuration = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 30
                LogFile "\(directory)/tinyproxy.log"
                LogLevel Info
                MaxClients 50
                Allow 127.0.0.1

                """
            if let user { configuration += "BasicAuth \(user) \(password ?? "")\n" }
            try configuration.write(toFile: directory + "/tinyproxy.conf", atomically: true, encoding: .utf8)
            let process = try ChildProcess.launch(executable, ["-d", "-c", directory + "/tinyproxy.conf"], outputDirectory: directory)
            let proxy = TinyProxy(port: port, directory: directory, process: process)
            let listening = await pollUntil(timeout: 10) { () -> Bool? in
                if !process.isRunning { return false }
                return LoopbackSocket.accepts(port: port) ? true : nil
            }
            if listening == true { return proxy }
            lastError = FixtureError.startFailed("tinyproxy on port \(port)", detail: proxy.log() + process.standardError())
            proxy.stop()
        }
        throw lastError
    }

    /// Stops tinyproxy by pid (SIGTERM now, SIGKILL after 2 s on a thread of its own), then removes its directory.
    /// Returns at once.
    public func stop() {
        let directory = directory
        process.stopInBackground(grace: 2) { Fixture.removeTree(directory) }
    }
}
