#if canImport(Glibc)
import Glibc
#endif

/// getaddrinfo failed for the configured host.
public struct AddressResolutionError: Error, CustomStringConvertible, Sendable {
    public let host: String
    public let code: Int32
    public var description: String { "getaddrinfo(\(host)) failed: \(String(cString: gai_strerror(code)))" }
}
