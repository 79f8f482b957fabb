import Foundation

/// Why a fixture could not be set up or used. Errors from system calls carry the call's name and errno.
public enum FixtureError: Error, CustomStringConvertible, Sendable {
    /// A system call failed: `call` names it, `context` says what it was for (a path, a port).
    case systemCall(String, errno: Int32, context: String)
    /// The nginx binary is not installed; the message says how to install it.
    case nginxNotInstalled(searched: [String])
    /// No python3 interpreter was found for the fault origin.
    case pythonNotInstalled(searched: [String])
    /// The PostgreSQL server programs (`initdb`, `postgres`) are not installed; the message says how to install them.
    case postgresNotInstalled(searched: [String])
    /// A server process exited or misbehaved while starting; `detail` holds its error output.
    case startFailed(String, detail: String)
    /// Something did not happen within its deadline.
    case timedOut(String)
    /// A response could not be parsed.
    case malformedResponse(String)

    public var description: String {
        switch self {
        case let .systemCall(call, errno, context):
            return "\(call) failed for \(context): \(String(cString: strerror(errno))) (errno \(errno))"
        case let .nginxNotInstalled(searched):
            return "nginx not found (looked in \(searched.joined(separator: ", ")) and PATH); "
                + "install it with `apt-get install nginx-light`"
        case let .pythonNotInstalled(searched):
            return "python3 not found (looked in \(searched.joined(separator: ", ")) and PATH); "
                + "install it with `apt-get install python3`"
        case let .postgresNotInstalled(searched):
            return "PostgreSQL's initdb and postgres not found (looked in \(searched.joined(separator: ", ")) and PATH); "
                + "install them with `apt-get install postgresql` (Debian/Ubuntu) or point FERRY_POSTGRES_BIN at their "
                + "directory, or set FERRY_SKIP_POSTGRES=1 to leave out the tests that need a PostgreSQL server"
        case let .startFailed(what, detail):
            return "\(what) did not start: \(detail)"
        case let .timedOut(what):
            return "timed out: \(what)"
        case let .malformedResponse(detail):
            return "malformed response: \(detail)"
        }
    }

    /// The error for the system call that just failed (reads `errno`).
    static func lastSystemCall(_ call: String, _ context: String) -> FixtureError {
        .systemCall(call, errno: errno, context: context)
    }
}
