/// A hash function Ferry can compute over a downloaded file, named as API.md's `checksum.algorithm` names it.
///
/// Pure vocabulary: the engine maps each case to libcrypto's EVP digest (`Digest`); the service and the client
/// only parse and print the names.
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    case sha256 = "sha-256"
    case sha512 = "sha-512"
    case sha1 = "sha-1"
    case md5 = "md5"

    /// Hexadecimal digits in a value of this algorithm (two per byte of output).
    public var hexLength: Int {
        switch self {
        case .sha256: 64
        case .sha512: 128
        case .sha1: 40
        case .md5: 32
        }
    }

    /// The name for people: `SHA-512`, `MD5`.
    public var displayName: String { rawValue.uppercased() }

    /// The algorithm a name stands for, ignoring case (`SHA-512` is `sha-512`); nil for any other name.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// The names API.md allows, for messages: `sha-256, sha-512, sha-1, md5`.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
