import Foundation

/// TCP sockets on 127.0.0.1 for the fixtures: free ports, readiness probes, blocking client connections.
public enum LoopbackSocket {
    /// A port that was free a moment ago: bind 127.0.0.1:0, read the port, close. Another process may take it
    /// before the caller binds it, so callers retry when their server fails to bind.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError.lastSystemCall("socket", "free port") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw FixtureError.lastSystemCall("bind", "127.0.0.1:0") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw FixtureError.lastSystemCall("getsockname", "127.0.0.1:0") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A blocking socket connected to 127.0.0.1:`port`, with `timeout` for each receive and send.
    static func connect(port: Int, timeout: Double) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError.lastSystemCall("socket", "127.0.0.1:\(port)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = FixtureError.lastSystemCall("connect", "127.0.0.1:\(port)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Whether something accepts connections on 127.0.0.1:`port` right now.
    public static func accepts(port: Int) -> Bool {
        guard let fd = try? connect(port: port, timeout: 1) else { return false }
        close(fd)
        return true
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        return address
    }
}
