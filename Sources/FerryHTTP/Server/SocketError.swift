#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: its name, errno and what it was about.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32
    public let context: String

    init(_ call: String, errno: Int32 = Glibc.errno, _ context: String = "") {
        self.call = call
        self.errno = errno
        self.context = context
    }

    public var description: String {
        "\(call)(\(context)) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
