#if canImport(Glibc)
import Glibc
#endif

/// Opens a non-blocking listening TCP socket: SO_REUSEADDR, IPV6_V6ONLY on IPv6, close-on-exec.
enum ListeningSocket {
    /// Returns the fd and the bound address (with the chosen port when `address.port` was 0).
    static func open(_ address: SocketAddress, backlog: Int32 = 1024) throws -> (fd: Int32, address: SocketAddress) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket", address.description) }
        do {
            var one: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw SocketError("setsockopt(SO_REUSEADDR)", address.description)
            }
            if address.family == AF_INET6 {
                guard setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                    throw SocketError("setsockopt(IPV6_V6ONLY)", address.description)
                }
            }
            try setNonBlocking(fd)
            var storage = address.storage
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
            }
            guard bound == 0 else { throw SocketError("bind", address.description) }
            guard listen(fd, backlog) == 0 else { throw SocketError("listen", address.description) }
            var local = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw SocketError("getsockname", address.description) }
            return (fd, SocketAddress(storage: local, length: length))
        } catch {
            close(fd)
            throw error
        }
    }

    static func setNonBlocking(_ fd: Int32) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SocketError("fcntl(O_NONBLOCK)") }
    }
}
