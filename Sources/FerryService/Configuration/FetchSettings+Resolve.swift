import FerryCore

extension ServiceConfiguration {
    /// `--fetch-allow`, `--fetch-max-age`, `--fetch-stale-if-error` and `--cache-key-ignore` (API.md, "Fetch-through").
    /// - Parameter value: the flag's or variable's name and text for a setting, nil when neither is given.
    static func resolveFetch(_ configuration: inout ServiceConfiguration,
                             value: (Setting) -> (String, String)?) throws(ConfigurationError) {
        if let (name, text) = value(.fetchAllow) {
            do { configuration.fetch.allow = try FetchAllowList(parsing: text) } catch {
                throw ConfigurationError(setting: name, value: error.pattern,
                                         expected: "a host, *.domain, either with :port, or * (e.g. files.pythonhosted.org, *.debian.org, 127.0.0.1:8081)")
            }
        }
        func duration(_ setting: Setting) throws(ConfigurationError) -> Double? {
            guard let (name, text) = value(setting) else { return nil }
            guard let seconds = DurationText.parse(text), seconds >= 0 else {
                throw ConfigurationError(setting: name, value: text, expected: "a duration such as 30m, 1h or 1d")
            }
            return seconds
        }
        if let seconds = try duration(.fetchMaxAge) { configuration.fetch.maxAge = seconds }
        if let seconds = try duration(.fetchStaleIfError) { configuration.fetch.staleIfError = seconds }
        if let (name, text) = value(.cacheKeyIgnore) {
            var names: [String] = []
            for item in text.split(separator: ",") {
                let parameter = item.trimmingCharacters(in: .whitespaces)
                guard CacheKeyRule.isValidName(parameter) else {
                    throw ConfigurationError(setting: name, value: parameter, expected: "a query parameter name such as token")
                }
                names.append(parameter)
            }
            configuration.fetch.keyRule = CacheKeyRule(ignoring: names)
        }
    }
}
