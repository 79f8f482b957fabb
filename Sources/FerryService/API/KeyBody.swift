import FerryStore

/// The bodies of `POST /api/v1/keys` and `PATCH /api/v1/keys/{id}`: a name, a scope and limits, each limit a whole
/// number of 0 or more, or `null` for none. In a `PATCH`, what is absent stays as it was (limits one by one).
struct KeyBody: Decodable {
    var name: String?
    var scope: String?
    var limits: LimitsChange?

    /// Limits given: `.some(nil)` for an explicit `null`.
    struct LimitsChange: Decodable {
        var values: [String: Int64?] = [:]

        static let names = ["maxActiveJobs", "maxJobs", "maxBytesPerSecond", "bytesPerDay", "spoolBytes"]

        struct Name: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Name.self)
            for name in Self.names where container.contains(Name(stringValue: name)) {
                let key = Name(stringValue: name)
                values[name] = .some(try container.decodeNil(forKey: key) ? nil : try container.decode(Int64.self, forKey: key))
            }
        }

        /// `limits` with the given values in place. - Throws: `invalid_request` for a negative value.
        func applied(to limits: APIKeyRecord.Limits) throws(APIError) -> APIKeyRecord.Limits {
            var result = limits
            for (name, value) in values {
                if let value, value < 0 { throw APIError(.invalidRequest, "'limits.\(name)' must be 0 or more, or null") }
                switch name {
                case "maxActiveJobs": result.maxActiveJobs = value
                case "maxJobs": result.maxJobs = value
                case "maxBytesPerSecond": result.maxBytesPerSecond = value
                case "bytesPerDay": result.bytesPerDay = value
                default: result.spoolBytes = value
                }
            }
            return result
        }
    }

    /// The name, checked: 1 to 64 characters, no control characters.
    static func validName(_ name: String) throws(APIError) -> String {
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(.invalidRequest, "'name' must be 1 to 64 characters, without control characters")
        }
        return name
    }

    /// The scope, checked.
    static func validScope(_ text: String) throws(APIError) -> APIKeyRecord.Scope {
        guard let scope = APIKeyRecord.Scope(rawValue: text) else {
            throw APIError(.invalidRequest, "'scope' must be one of: read, write, admin")
        }
        return scope
    }
}
