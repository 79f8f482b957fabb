/// The digest a whole file is expected to have (API `checksum`, or `sha256` as its short form): an algorithm and
/// its value as lowercase hex, checked when it was made.
///
/// A pure value. Its text form, `sha-512:HEX` (`description`, `init(parsing:)`), is what the store keeps and what
/// `ferry add --checksum` takes; the API gives the two parts as an object.
public struct Checksum: Sendable, Hashable, Codable, CustomStringConvertible {
    public let algorithm: DigestAlgorithm
    /// Lowercase hexadecimal, exactly `algorithm.hexLength` digits.
    public let value: String

    /// A checksum from its two parts; the value may be in either case.
    /// - Throws: `ChecksumProblem` when the value is not hexadecimal or has the wrong length for the algorithm.
    public init(algorithm: DigestAlgorithm, value: String) throws(ChecksumProblem) {
        let lower = value.lowercased()
        guard !lower.isEmpty, lower.utf8.allSatisfy(Self.isHexDigit) else { throw .notHexadecimal(algorithm) }
        guard lower.utf8.count == algorithm.hexLength else {
            throw .wrongLength(algorithm, found: lower.utf8.count)
        }
        self.algorithm = algorithm
        self.value = lower
    }

    /// A checksum from an algorithm's name (case ignored) and a value.
    /// - Throws: `ChecksumProblem.unknownAlgorithm` for a name API.md does not list, else as `init(algorithm:value:)`.
    public init(algorithmName: String, value: String) throws(ChecksumProblem) {
        guard let algorithm = DigestAlgorithm(name: algorithmName) else { throw .unknownAlgorithm(algorithmName) }
        try self.init(algorithm: algorithm, value: value)
    }

    /// A checksum in its text form, `ALGORITHM:HEX` (`sha-512:9b71…`).
    /// - Throws: `ChecksumProblem.notAlgorithmAndValue` without the colon, else as `init(algorithmName:value:)`.
    public init(parsing text: String) throws(ChecksumProblem) {
        guard let colon = text.firstIndex(of: ":") else { throw .notAlgorithmAndValue }
        try self.init(algorithmName: String(text[..<colon]), value: String(text[text.index(after: colon)...]))
    }

    /// `sha-512:HEX`.
    public var description: String { "\(algorithm.rawValue):\(value)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// Why a checksum was refused. `description` is a sentence fragment about the value, for users (the API and the
/// command line put the field's name before it).
public enum ChecksumProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// An algorithm API.md does not list (the name as given).
    case unknownAlgorithm(String)
    /// Not hexadecimal digits.
    case notHexadecimal(DigestAlgorithm)
    /// Hexadecimal, but not as many digits as the algorithm gives.
    case wrongLength(DigestAlgorithm, found: Int)
    /// The text form lacks the colon between algorithm and value.
    case notAlgorithmAndValue

    public var description: String {
        switch self {
        case .unknownAlgorithm(let name):
            let shown = name.unicodeScalars.count > 32 ? String(name.unicodeScalars.prefix(32)) + "…" : name
            return "the algorithm \"\(shown.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined())\" is not one of \(DigestAlgorithm.names)"
        case .notHexadecimal(let algorithm):
            return "a \(algorithm.displayName) value must be \(algorithm.hexLength) hexadecimal digits (0-9, a-f)"
        case .wrongLength(let algorithm, let found):
            return "a \(algorithm.displayName) value is \(algorithm.hexLength) hexadecimal digits, not \(found)"
        case .notAlgorithmAndValue:
            return "a checksum is written ALGORITHM:HEX, e.g. sha-512:9b71d2…, with ALGORITHM one of \(DigestAlgorithm.names)"
        }
    }
}
