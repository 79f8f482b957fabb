import FerryCore
import Foundation

/// What an origin's response says about keeping it (the part of RFC 9111 a shared cache of whole files needs):
/// `Cache-Control` `s-maxage` (a shared cache's, preferred), `max-age`, `no-cache` (revalidate every time), `no-store`
/// and `private` (not kept), else `Expires` against the response's `Date`.
///
/// Pure value, parsed from the header values as received.
struct OriginCachePolicy: Sendable, Equatable {
    /// Seconds fresh by `s-maxage`, else `max-age`.
    var maxAge: Double?
    /// `Expires` minus `Date` (or minus the time received without `Date`) in seconds; 0 for an unreadable `Expires`
    /// (RFC 9111 4.2.1: already expired).
    var expiresIn: Double?
    var noCache = false
    /// `no-store` or `private`: streamed to the client but not kept.
    var noStore = false

    /// The policy of a response whose header values are these (nil: the header was absent).
    static func parse(cacheControl: String?, expires: String?, date: String?, receivedAt: Date) -> OriginCachePolicy {
        var policy = OriginCachePolicy()
        var maxAge: Double?
        var sharedMaxAge: Double?
        for directive in (cacheControl ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first?.lowercased(), !name.isEmpty else { continue }
            let argument = parts.count == 2 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            switch name {
            case "no-cache": policy.noCache = true
            case "no-store", "private": policy.noStore = true
            case "max-age": maxAge = argument.flatMap(seconds) ?? 0
            case "s-maxage": sharedMaxAge = argument.flatMap(seconds) ?? 0
            default: break
            }
        }
        policy.maxAge = sharedMaxAge ?? maxAge
        if let expires {
            if let when = HTTPDate.parse(expires) {
                let base = date.flatMap(HTTPDate.parse) ?? receivedAt
                policy.expiresIn = max(0, when.timeIntervalSince(base))
            } else {
                policy.expiresIn = 0
            }
        }
        return policy
    }

    /// How long a response received now stays fresh: 0 with `no-cache`, else `s-maxage`/`max-age`, else `Expires`,
    /// else `defaultMaxAge` (`--fetch-max-age`).
    func lifetime(defaultMaxAge: Double) -> Double {
        if noCache { return 0 }
        return maxAge ?? expiresIn ?? defaultMaxAge
    }

    /// delta-seconds: digits only; an overflowing value counts as a very long time (RFC 9111 1.2.2).
    private static func seconds(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else { return nil }
        return Double(text).map { min($0, 2_147_483_648) }
    }
}

/// When a cached entry stops being fresh, and how long after that it may still be served if its origin cannot be
/// reached (`--fetch-stale-if-error`).
///
/// Pure value; the clock is the caller's.
struct Freshness: Sendable, Equatable {
    var freshUntil: Date
    var staleIfErrorUntil: Date

    /// What to do with a request for the entry at `now`.
    enum Decision: Equatable {
        /// Serve it without asking the origin.
        case fresh
        /// Ask the origin first (a conditional request); `mayServeStale`: if it cannot be reached, serve it anyway.
        case revalidate(mayServeStale: Bool)
    }

    init(freshUntil: Date, staleIfErrorUntil: Date) {
        self.freshUntil = freshUntil
        self.staleIfErrorUntil = staleIfErrorUntil
    }

    /// The freshness of a response received at `receivedAt` under `policy` and the settings.
    init(policy: OriginCachePolicy, receivedAt: Date, settings: FetchSettings) {
        let fresh = receivedAt.addingTimeInterval(policy.lifetime(defaultMaxAge: settings.maxAge))
        self.init(freshUntil: fresh, staleIfErrorUntil: fresh.addingTimeInterval(settings.staleIfError))
    }

    func decision(at now: Date) -> Decision {
        if now < freshUntil { return .fresh }
        return .revalidate(mayServeStale: now < staleIfErrorUntil)
    }
}
