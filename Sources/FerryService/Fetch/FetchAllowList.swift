import FerryCore

/// The origins fetch-through may reach (`--fetch-allow`, repeatable; `FERRY_FETCH_ALLOW`, a comma list): a host
/// (`files.pythonhosted.org`), a wildcard for its subdomains (`*.debian.org`: `deb.debian.org`, not `debian.org`),
/// either with a port where not the scheme's default (`127.0.0.1:8081`), or `*` for every destination the guard
/// allows. Empty: fetch-through is off.
///
/// Pure value, fixed at start-up. Hosts are compared in their canonical form (`SubmittedURL`'s: lower-cased,
/// Punycode, IPv4 in dotted quads, IPv6 in brackets), so a pattern means what the URL it matches means.
struct FetchAllowList: Sendable, Equatable {
    enum Host: Sendable, Equatable {
        case any
        case exactly(String)
        /// Subdomains of the name (stored with its leading dot).
        case under(String)
    }

    struct Pattern: Sendable, Equatable {
        var host: Host
        /// The port it allows; nil: the scheme's default only (every port for `*`).
        var port: Int?

        /// A pattern's port is the port connected to (`host:443` allows `https://host/`); without one, the URL's
        /// scheme's default.
        func allows(port url: SubmittedURL) -> Bool {
            port.map { $0 == url.effectivePort } ?? (url.port == nil)
        }
    }

    /// Why a pattern was refused (the configuration names the flag).
    struct InvalidPattern: Error, Equatable {
        let pattern: String
    }

    let patterns: [Pattern]

    var isEmpty: Bool { patterns.isEmpty }

    init(patterns: [Pattern] = []) { self.patterns = patterns }

    /// The list from the comma-separated texts of the flag (or its variable).
    init(parsing text: String) throws(InvalidPattern) {
        var patterns: [Pattern] = []
        for item in text.split(separator: ",") {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            patterns.append(try Self.pattern(trimmed))
        }
        self.patterns = patterns
    }

    /// Whether `url` is an allowed origin.
    func allows(_ url: SubmittedURL) -> Bool {
        let host = url.host.serialized
        return patterns.contains { pattern in
            switch pattern.host {
            case .any:
                return true
            case .exactly(let name):
                return name == host && pattern.allows(port: url)
            case .under(let suffix):
                return host.hasSuffix(suffix) && host.count > suffix.count && pattern.allows(port: url)
            }
        }
    }

    private static func pattern(_ text: String) throws(InvalidPattern) -> Pattern {
        if text == "*" { return Pattern(host: .any, port: nil) }
        let wildcard = text.hasPrefix("*.")
        let rest = wildcard ? String(text.dropFirst(2)) : text
        guard !rest.isEmpty, !rest.contains("*"), !rest.contains("/"), !rest.contains("@") else {
            throw InvalidPattern(pattern: text)
        }
        // Parsed as the host of a URL is, so that it is canonical; a wildcard's domain through a sample subdomain.
        let sample = wildcard ? "http://x." + rest + "/" : "http://" + rest + "/"
        guard let url = try? SubmittedURL.parse(sample) else { throw InvalidPattern(pattern: text) }
        if let port = url.port, port == 0 { throw InvalidPattern(pattern: text) }
        // An explicit ":80" is dropped by the parser: written or not, it allows the default port.
        if wildcard {
            guard case .domain(let name) = url.host, name.hasPrefix("x.") else { throw InvalidPattern(pattern: text) }
            return Pattern(host: .under(String(name.dropFirst(1))), port: url.port)
        }
        return Pattern(host: .exactly(url.host.serialized), port: url.port)
    }
}
