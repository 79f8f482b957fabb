import FerryTestSupport
import Foundation

/// A real nginx on 127.0.0.1 taking onward deliveries, with its own prefix directory (config, pid, logs, temp
/// paths) so it never touches the system's nginx:
/// - `PUT url("/upload/<path>")` stores the body as `root/upload/<path>` (nginx's DAV module; directories made);
/// - anything to `url("/refuse/<path>")` answers 403;
/// - `requests()` is what it logged: method, path, status and the `X-Delivery-Test` request header.
///
/// Stop it with `stop()`: SIGTERM, then SIGKILL to its group; the prefix is removed. Idempotent.
/// Thread safety: `stopped` is guarded by `lock`; methods may be called from any thread.
final class DAVTarget: @unchecked Sendable {
    struct Request: Equatable {
        var method: String
        var path: String
        var status: Int
        var testHeader: String
    }

    let port: Int
    let prefix: String
    let process: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// Where uploads land: `PUT /upload/a.bin` is `root + "/upload/a.bin"`.
    var root: String { prefix + "/www" }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path) }

    private init(port: Int, prefix: String, process: ChildProcess) {
        self.port = port
        self.prefix = prefix
        self.process = process
    }

    deinit { stop() }

    static func start() throws -> DAVTarget {
        let executable = try NginxOrigin.executablePath()
        var lastError: Error = HarnessError("nginx (DAV target) was not started")
        for _ in 0..<5 {
            let prefix = try Fixture.tempDirectory("ferry-dav-target")
            try FileManager.default.createDirectory(atPath: prefix + "/www/upload", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: prefix + "/temp", withIntermediateDirectories: true)
            let port = try freePort()
            try configuration(prefix: prefix, port: port).write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
            let process = try ChildProcess.launch(
                executable, ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log"],
                outputDirectory: prefix)
            let target = DAVTarget(port: port, prefix: prefix, process: process)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, process.isRunning {
                if FileManager.default.fileExists(atPath: prefix + "/nginx.pid"),
                   (try? LoopbackConnection.fetch(port: port, "/", headers: [("Connection", "close")], timeout: 1)) != nil {
                    return target
                }
                usleep(20_000)
            }
            lastError = HarnessError("nginx (DAV target) on port \(port) did not start: "
                + (try String(contentsOfFile: prefix + "/error.log", encoding: .utf8)))
            target.stop()
        }
        throw lastError
    }

    private static func configuration(prefix: String, port: Int) -> String {
        """
        daemon off;
        master_process on;
        worker_processes 1;
        \(geteuid() == 0 ? "user root root;" : "")
        pid "\(prefix)/nginx.pid";
        error_log "\(prefix)/error.log" warn;
        events { worker_connections 64; }
        http {
            log_format delivery "$request_method\\t$uri\\t$status\\t$http_x_delivery_test";
            access_log "\(prefix)/access.log" delivery;
            client_body_temp_path "\(prefix)/temp/client_body";
            proxy_temp_path "\(prefix)/temp/proxy";
            fastcgi_temp_path "\(prefix)/temp/fastcgi";
            uwsgi_temp_path "\(prefix)/temp/uwsgi";
            scgi_temp_path "\(prefix)/temp/scgi";
            server {
                listen 127.0.0.1:\(port);
                root "\(prefix)/www";
                location /upload/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0; }
                location /refuse/ { return 403; }
            }
        }

        """
    }

    /// A port the kernel has just given out on 127.0.0.1 (nginx may still lose it to a race: `start` retries).
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessError("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Every request nginx logged so far (a line appears when a request ends).
    func requests() -> [Request] {
        let text = (try? String(contentsOfFile: prefix + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let status = Int(fields[2]) else { return nil }
            return Request(method: fields[0], path: fields[1], status: status, testHeader: fields[3])
        }
    }

    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        let prefix = prefix
        process.stopInBackground(grace: 5) { Fixture.removeTree(prefix) }
    }
}
