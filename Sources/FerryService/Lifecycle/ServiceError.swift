import Foundation

/// A failure to start or run the service, carrying the call that failed.
public enum ServiceError: Error, CustomStringConvertible {
    case system(String, Int32)
    case startup(String)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .startup(let why): why
        }
    }
}
