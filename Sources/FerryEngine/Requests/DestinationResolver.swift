import Dispatch
import FerryCore
import Foundation

/// Resolves a destination's host for a request through the proxy and pins the first address the destination
/// guard allows (`DestinationPin.choose`). Without a proxy libcurl resolves and the guard runs on the address
/// connected; with one, libcurl only ever connects to the proxy, so Ferry resolves and checks here instead.
///
/// Stateless: `getaddrinfo` blocks, so it runs on a global queue; the answer is delivered on the caller's queue.
enum DestinationResolver {
    static func pin(
        _ url: SubmittedURL, policy: AddressPolicy, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<DestinationPin, PinRefusal>) -> Void
    ) {
        let host = url.host.serialized, port = url.effectivePort
        if let literal = url.host.address {
            let result = DestinationPin.choose(host: host, port: port, addresses: [literal], policy: policy)
            queue.async { completion(result) }
            return
        }
        if case .domain(let name) = url.host, let refusal = policy.refusal(ofName: name) {
            queue.async { completion(.failure(.forbidden("\(host): \(refusal)"))) }
            return
        }
        DispatchQueue.global(qos: .userInitiated).async {
            let result: Result<DestinationPin, PinRefusal>
            switch addresses(of: host) {
            case .success(let found): result = DestinationPin.choose(host: host, port: port, addresses: found, policy: policy)
            case .failure(let problem): result = .failure(problem)
            }
            queue.async { completion(result) }
        }
    }

    /// The IPv4 and IPv6 addresses of `name`, in the resolver's order, without repeats.
    static func addresses(of name: String) -> Result<[IPAddress], PinRefusal> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(name, nil, &hints, &list)
        guard code == 0 else {
            return .failure(.unresolved("\(name) did not resolve: \(String(cString: gai_strerror(code)))"))
        }
        defer { freeaddrinfo(list) }
        var found: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let sockaddr = current.pointee.ai_addr {
                var bytes: [UInt8] = []
                if current.pointee.ai_family == AF_INET {
                    sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                        bytes = withUnsafeBytes(of: sin.pointee.sin_addr) { Array($0) }
                    }
                } else if current.pointee.ai_family == AF_INET6 {
                    sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                        bytes = withUnsafeBytes(of: sin6.pointee.sin6_addr) { Array($0) }
                    }
                }
                if let address = IPAddress(bytes: bytes), !found.contains(address) { found.append(address) }
            }
            entry = current.pointee.ai_next
        }
        return .success(found)
    }
}
