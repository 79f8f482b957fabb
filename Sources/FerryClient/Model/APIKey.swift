import FerryCore
import Foundation

/// An API key as `GET /api/v1/keys` shows it; `token` only in the answer that made it (`POST /api/v1/keys`).
public struct APIKey: Decodable, Sendable, Equatable {
    /// A key's limits; nil: none.
    public typealias Limits = KeyLimits

    public var id: String
    public var name: String
    public var scope: String
    public var limits: Limits
    public var createdAt: String
    public var lastUsedAt: String?
    public var token: String?

    /// One line for people: `ID  NAME  SCOPE  limits  last used`.
    public var line: String {
        var limits: [String] = []
        if let value = self.limits.maxActiveJobs { limits.append("max-active \(value)") }
        if let value = self.limits.maxJobs { limits.append("max-jobs \(value)") }
        if let value = self.limits.maxBytesPerSecond { limits.append("\(value) B/s") }
        if let value = self.limits.bytesPerDay { limits.append("\(value) B/day") }
        if let value = self.limits.spoolBytes { limits.append("spool \(value) B") }
        return "\(id)  \(name)  \(scope)  \(limits.isEmpty ? "no limits" : limits.joined(separator: ", "))  "
            + "last used \(lastUsedAt ?? "never")"
    }
}

/// The body of `POST /api/v1/keys`.
public struct NewKey: Sendable, Equatable {
    public var name: String
    public var scope: String
    /// The key's limits, each nil for none.
    public var limits: APIKey.Limits

    public init(name: String, scope: String, limits: APIKey.Limits = APIKey.Limits()) {
        self.name = name
        self.scope = scope
        self.limits = limits
    }

    /// The JSON body.
    var body: [UInt8] {
        var given: [String: Int64] = [:]
        if let value = limits.maxActiveJobs { given["maxActiveJobs"] = value }
        if let value = limits.maxJobs { given["maxJobs"] = value }
        if let value = limits.maxBytesPerSecond { given["maxBytesPerSecond"] = value }
        if let value = limits.bytesPerDay { given["bytesPerDay"] = value }
        if let value = limits.spoolBytes { given["spoolBytes"] = value }
        let object: [String: Any] = ["name": name, "scope": scope, "limits": given]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { Array($0) } ?? []
    }
}
