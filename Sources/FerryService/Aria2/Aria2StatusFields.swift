/// Which fields of aria2's status object a call asks for (its `keys`), as a bit set made once per call rather than
/// names looked up for every job; no `keys` (or an empty list) asks for all. Pure.
struct Aria2StatusFields: OptionSet, Hashable, Sendable {
    let rawValue: UInt16

    static let completedLength = Self(rawValue: 1 << 0)
    static let connections = Self(rawValue: 1 << 1)
    static let dir = Self(rawValue: 1 << 2)
    static let downloadSpeed = Self(rawValue: 1 << 3)
    static let errorCode = Self(rawValue: 1 << 4)
    static let errorMessage = Self(rawValue: 1 << 5)
    static let files = Self(rawValue: 1 << 6)
    static let gid = Self(rawValue: 1 << 7)
    static let numPieces = Self(rawValue: 1 << 8)
    static let pieceLength = Self(rawValue: 1 << 9)
    static let status = Self(rawValue: 1 << 10)
    static let totalLength = Self(rawValue: 1 << 11)
    static let uploadLength = Self(rawValue: 1 << 12)
    static let uploadSpeed = Self(rawValue: 1 << 13)
    static let all = Self(rawValue: (1 << 14) - 1)

    /// Each field's name, in the order aria2 writes them (its keys sorted).
    static let names: [(name: String, field: Aria2StatusFields)] = [
        ("completedLength", .completedLength), ("connections", .connections), ("dir", .dir),
        ("downloadSpeed", .downloadSpeed), ("errorCode", .errorCode), ("errorMessage", .errorMessage), ("files", .files),
        ("gid", .gid), ("numPieces", .numPieces), ("pieceLength", .pieceLength), ("status", .status),
        ("totalLength", .totalLength), ("uploadLength", .uploadLength), ("uploadSpeed", .uploadSpeed),
    ]

    init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The fields `keys` names (names aria2 has but Ferry does not show, and unknown ones, ask for nothing).
    init(keys: [String]?) {
        guard let keys, !keys.isEmpty else {
            self = .all
            return
        }
        var fields: Aria2StatusFields = []
        for key in keys {
            if let named = Self.names.first(where: { $0.name == key }) { fields.insert(named.field) }
        }
        self = fields
    }
}
