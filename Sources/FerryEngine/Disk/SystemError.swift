import Foundation

/// A failed system call: its name, the path or descriptor it worked on, and `errno`.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    public let call: String
    public let target: String
    public let code: Int32

    public init(_ call: String, _ target: String, errno code: Int32 = errno) {
        self.call = call
        self.target = target
        self.code = code
    }

    public var description: String { "\(call)(\(target)): \(String(cString: strerror(code))) (errno \(code))" }

    /// No space left on the device (or quota exhausted).
    public var isNoSpace: Bool { code == ENOSPC || code == EDQUOT }
}
