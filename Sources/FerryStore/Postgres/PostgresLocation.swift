import CPostgres
import FerryCore

/// Where a `PostgresJobStore` lives: a `postgres://` (or `postgresql://`) URL as libpq reads it, e.g.
/// `postgres://user:password@host:5432/database?sslmode=require`.
///
/// `redacted` is the form to log and show: the userinfo is written `***@` (as job URLs are) and a `password`
/// query parameter `password=***`, so the password never appears: `description`, `debugDescription` and the mirror
/// (`dump`, a configuration printed whole) all show that form. A pure value.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    /// The URL as given, password and all: only ever handed to libpq.
    public let url: String

    /// Accepts a `postgres://` or `postgresql://` URL that libpq can parse; nil for anything else.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else { return nil }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &message) else {
            if let message { PQfreemem(message) }
            return nil
        }
        PQconninfoFree(options)
        url = text
    }

    /// The URL without its password.
    public var redacted: String {
        let withoutUserinfo = SubmittedURL.redacting(url)
        guard let question = withoutUserinfo.firstIndex(of: "?") else { return withoutUserinfo }
        let query = withoutUserinfo[withoutUserinfo.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
            .map { pair -> String in
                pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
            }
        return String(withoutUserinfo[...question]) + query.joined(separator: "&")
    }

    public var description: String { redacted }

    public var debugDescription: String { redacted }

    public var customMirror: Mirror { Mirror(self, children: ["url": redacted]) }
}
