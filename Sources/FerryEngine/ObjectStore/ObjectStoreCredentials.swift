/// The access key pair requests to the object store are signed with (by libcurl: `CURLOPT_AWS_SIGV4`).
///
/// Read from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (API.md, "Several nodes"). The secret never appears
/// in `description`, so the value may be logged.
public struct ObjectStoreCredentials: Sendable, Equatable, CustomStringConvertible {
    public let accessKeyID: String
    let secretAccessKey: String

    public init(accessKeyID: String, secretAccessKey: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// The pair from the environment.
    /// - Throws: `ObjectStoreLocationError` naming the variable that is missing or empty.
    public static func fromEnvironment(_ environment: [String: String]) throws(ObjectStoreLocationError) -> ObjectStoreCredentials {
        func value(_ name: String) throws(ObjectStoreLocationError) -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw ObjectStoreLocationError("\(name) is not set (the object store's credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
            }
            return value
        }
        return ObjectStoreCredentials(accessKeyID: try value("AWS_ACCESS_KEY_ID"), secretAccessKey: try value("AWS_SECRET_ACCESS_KEY"))
    }

    /// The access key's first four characters and the secret's absence: enough to tell two keys apart in a log.
    public var description: String {
        "access key \(accessKeyID.prefix(4))… (secret hidden)"
    }
}
