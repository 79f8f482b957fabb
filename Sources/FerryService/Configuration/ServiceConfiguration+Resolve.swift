import FerryCore
import FerryEngine
import Foundation

/// A setting that could not be understood, naming the flag and its environment twin.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let setting: String
    public let value: String
    public let expected: String
    public var description: String { "invalid value '\(value)' for \(setting): expected \(expected)" }
}

extension ServiceConfiguration {
    /// The settings of `ferry serve` with their environment twins; `ServeOption.all` describes each.
    public enum Setting: String, CaseIterable, Sendable {
        case host, port, spool, store, token
        case objectStore = "object-store"
        case nodeID = "node-id"
        case lease
        case readToken = "read-token"
        case maxConcurrent = "max-concurrent"
        case maxBytesPerSecond = "max-bytes-per-second"
        case maxPerHost = "max-per-host"
        case allowPrivateNetworks = "allow-private-networks"
        /// Repeatable on the command line (its values joined with commas); a comma list in `FERRY_ALLOW_NETWORKS`.
        case allowNetwork = "allow-network"
        case proxy
        case maxFileSize = "max-file-size"
        case minFreeSpace = "min-free-space"
        case spoolQuota = "spool-quota"
        case retention
        case publicDirectory = "public"
        case webhookURL = "webhook-url"
        case webhookSecret = "webhook-secret"
        case sshKnownHosts = "ssh-known-hosts"
        /// Repeatable on the command line (its values joined with commas); a comma list in `FERRY_FETCH_ALLOW`.
        case fetchAllow = "fetch-allow"
        case fetchMaxAge = "fetch-max-age"
        case fetchStaleIfError = "fetch-stale-if-error"
        /// Repeatable on the command line (joined with commas); a comma list in `FERRY_CACHE_KEY_IGNORE`.
        case cacheKeyIgnore = "cache-key-ignore"
        case logLevel = "log-level"

        /// `FERRY_MAX_CONCURRENT` for `--max-concurrent`.
        public var environmentName: String {
            if self == .allowNetwork { return "FERRY_ALLOW_NETWORKS" }  // a list, named as one
            return "FERRY_" + rawValue.uppercased().replacingOccurrences(of: "-", with: "_")
        }
    }

    /// Resolves settings: a flag wins over its variable, a variable over the default.
    /// - Parameters:
    ///   - flags: values given on the command line, by setting (a boolean flag given is "1").
    ///   - environment: the process environment.
    public static func resolve(
        flags: [Setting: String], environment: [String: String]
    ) throws(ConfigurationError) -> ServiceConfiguration {
        var configuration = ServiceConfiguration()
        func value(_ setting: Setting) -> (String, String)? {
            if let flag = flags[setting] { return ("--\(setting.rawValue)", flag) }
            if let env = environment[setting.environmentName], !env.isEmpty { return (setting.environmentName, env) }
            return nil
        }
        func size(_ setting: Setting) throws(ConfigurationError) -> Int64? {
            guard let (name, text) = value(setting) else { return nil }
            guard let bytes = ByteSize.parse(text), bytes >= 0 else {
                throw ConfigurationError(setting: name, value: text, expected: "a size such as 500M, 1GiB or 1048576")
            }
            return bytes
        }
        if let (_, host) = value(.host) { configuration.host = host }
        if let (name, text) = value(.port) {
            guard let port = Int(text), (0...65535).contains(port) else {
                throw ConfigurationError(setting: name, value: text, expected: "a port number from 0 to 65535")
            }
            configuration.port = port
        }
        if let (_, spool) = value(.spool) { configuration.spool = spool }
        if let (name, text) = value(.store) {
            guard let store = StoreSetting(text) else {
                // Shown redacted: a mistyped URL may still carry a password.
                throw ConfigurationError(setting: name, value: SubmittedURL.redacting(text),
                                         expected: "sqlite or a PostgreSQL URL such as postgres://user:password@host:5432/database")
            }
            configuration.store = store
        }
        if let (name, text) = value(.objectStore) {
            do { _ = try ObjectStoreLocation(parsing: text) } catch {
                throw ConfigurationError(setting: name, value: text, expected: "s3://bucket/prefix?endpoint=https://host:port&region=… (\(error.message))")
            }
            configuration.objectStore = text
        }
        if let (name, text) = value(.nodeID) {
            guard !text.isEmpty, text.utf8.count <= 200, !text.contains(where: { $0.isNewline || $0 == "," }) else {
                throw ConfigurationError(setting: name, value: text, expected: "a name of up to 200 bytes on one line, without commas")
            }
            configuration.nodeID = text
        }
        if let (name, text) = value(.lease) {
            guard let seconds = DurationText.parse(text), seconds >= 1, seconds <= 3600 else {
                throw ConfigurationError(setting: name, value: text, expected: "a duration from 1s to 1h such as 15s")
            }
            configuration.lease = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let (_, token) = value(.token) { configuration.token = token }
        if let (name, token) = value(.readToken) {
            guard !token.isEmpty else { throw ConfigurationError(setting: name, value: token, expected: "a token that is not empty") }
            configuration.readToken = token
        }
        if let (name, text) = value(.maxConcurrent) {
            let range = RuntimeSettings.maxConcurrentRange
            guard let n = Int(text), range.contains(n) else {
                throw ConfigurationError(setting: name, value: text,
                                         expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            configuration.maxConcurrent = n
        }
        if let (name, text) = value(.maxBytesPerSecond) {
            guard let rate = ByteSize.parse(text), rate > 0 else {
                throw ConfigurationError(setting: name, value: text, expected: "a speed in bytes per second such as 500K, 10MiB or 1048576")
            }
            configuration.maxBytesPerSecond = rate
        }
        if let (name, text) = value(.maxPerHost) {
            guard let n = Int(text), (1...64).contains(n) else {
                throw ConfigurationError(setting: name, value: text, expected: "a whole number from 1 to 64")
            }
            configuration.maxPerHost = n
        }
        if let (name, text) = value(.allowPrivateNetworks) {
            switch text.lowercased() {
            case "1", "true", "yes", "on": configuration.allowPrivateNetworks = true
            case "0", "false", "no", "off": configuration.allowPrivateNetworks = false
            default: throw ConfigurationError(setting: name, value: text, expected: "1 or 0")
            }
        }
        if let (name, text) = value(.allowNetwork) {
            for item in text.split(separator: ",") {
                let block = item.trimmingCharacters(in: .whitespaces)
                guard let network = IPNetwork(block) else {
                    throw ConfigurationError(setting: name, value: block, expected: "a CIDR block such as 127.0.0.1/32 or 10.1.0.0/16")
                }
                configuration.destinations.allowedNetworks.append(network)
            }
        }
        if let (name, text) = value(.proxy) {
            do { configuration.proxy = try ProxySetting(parsing: text) } catch {
                // The value is shown without its credentials.
                let shown = SubmittedURL.redacting(text.contains("://") ? text : "http://" + text)
                let reason = if case .invalid(let detail) = error { detail } else { "\(error)" }
                throw ConfigurationError(setting: name, value: shown, expected: "an http://, https:// or socks5h:// proxy URL with a port (\(reason))")
            }
        }
        configuration.maxFileSize = try size(.maxFileSize)
        if let reserve = try size(.minFreeSpace) { configuration.minFreeSpace = reserve }
        configuration.spoolQuota = try size(.spoolQuota)
        if let (name, text) = value(.retention) {
            guard let seconds = DurationText.parse(text), seconds > 0 else {
                throw ConfigurationError(setting: name, value: text, expected: "a duration such as 12h or 7d")
            }
            configuration.retention = seconds
        }
        if let (_, dir) = value(.publicDirectory) { configuration.publicDirectory = dir }
        if let (_, path) = value(.sshKnownHosts) {
            configuration.sshKnownHosts = path.hasPrefix("~/") ? homeDirectory + path.dropFirst(1) : path
        }
        if let (name, text) = value(.webhookURL) {
            // Checked as a job's `notify` is: http(s), and no literal address the destination guard refuses.
            guard let url = try? SubmittedURL.parse(text) else {
                throw ConfigurationError(setting: name, value: text, expected: "an http or https URL")
            }
            let refusal: String? = switch url.host {
            case .ipv4(let address), .ipv6(let address): configuration.destinations.refusal(of: address)
            case .domain(let host): configuration.destinations.refusal(ofName: host)
            }
            if let refusal {
                throw ConfigurationError(setting: name, value: text, expected: "a receiver the destination guard allows (\(refusal))")
            }
            configuration.webhookURL = url.normalized
        }
        if let (name, text) = value(.webhookSecret) {
            guard text.hasPrefix("whsec_"), WebhookSecret(text) != nil else {
                throw ConfigurationError(setting: name, value: "whsec_…", expected: "whsec_ followed by base64 (Standard Webhooks)")
            }
            configuration.webhookSecret = text
        }
        try resolveFetch(&configuration, value: value)
        if let (name, text) = value(.logLevel) {
            guard let level = ServiceConfiguration.logLevels.first(where: { $0 == text.lowercased() }) else {
                throw ConfigurationError(setting: name, value: text, expected: ServiceConfiguration.logLevels.joined(separator: ", "))
            }
            configuration.logLevel = level
        }
        // Test-only: the first retry's delay, in seconds.
        if let text = environment["FERRY_WEBHOOK_RETRY_BASE"], let seconds = Double(text), seconds > 0 {
            configuration.webhookRetryBase = seconds
        }
        // Test-only: bytes per part of object-store uploads.
        if let text = environment["FERRY_OBJECT_PART_SIZE"], let bytes = ByteSize.parse(text), bytes > 0 {
            configuration.objectPartSize = bytes
        }
        return configuration
    }
}
