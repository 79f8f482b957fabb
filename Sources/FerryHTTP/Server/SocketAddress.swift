#if canImport(Glibc)
import Glibc
#endif

/// A socket address (IPv4 or IPv6) as returned by getaddrinfo, accept and getsockname.
struct SocketAddress: Equatable {
    var storage: sockaddr_storage
    var length: socklen_t

    var family: Int32 { Int32(storage.ss_family) }

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
        self.init(storage: storage, length: length)
    }

    var port: Int {
        get {
            var copy = storage
            return withUnsafePointer(to: &copy) { pointer in
                if family == AF_INET6 {
                    return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
                }
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        set {
            let family = self.family
            withUnsafeMutablePointer(to: &storage) { pointer in
                if family == AF_INET6 {
                    pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = UInt16(newValue).bigEndian }
                } else {
                    pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = UInt16(newValue).bigEndian }
                }
            }
        }
    }

    /// "1.2.3.4" or "::1".
    var host: String {
        var copy = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = self.family
        let ok: Bool = withUnsafePointer(to: &copy) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var address = sin6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var address = sin.pointee.sin_addr
                return inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil
            }
        }
        guard ok, let end = text.firstIndex(of: 0) else { return "?" }
        return String(decoding: text[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "host:port", with brackets for IPv6.
    var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.family == rhs.family && lhs.host == rhs.host && lhs.port == rhs.port
    }

    /// Every address `host` resolves to for a passive TCP socket on `port`, without duplicates.
    static func resolve(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let node: String? = host.isEmpty ? nil : host.trimmingBrackets
        let code = getaddrinfo(node, String(port), &hints, &result)
        guard code == 0 else { throw AddressResolutionError(host: host, code: code) }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var cursor = result
        while let info = cursor {
            if let address = info.pointee.ai_addr, info.pointee.ai_family == AF_INET || info.pointee.ai_family == AF_INET6 {
                let candidate = SocketAddress(address, length: info.pointee.ai_addrlen)
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            cursor = info.pointee.ai_next
        }
        return addresses
    }
}

extension String {
    var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
