import FerryStore

/// The body of `PATCH /api/v1/settings`, validated: `maxBytesPerSecond` a positive whole number or `null` (no limit),
/// `maxConcurrent` a whole number in `RuntimeSettings.maxConcurrentRange`; at least one of them. Unknown fields are
/// ignored, as everywhere.
struct SettingsBody: Decodable {
    var maxBytesPerSecond: Int64??
    var maxConcurrent: Int?

    enum CodingKeys: String, CodingKey { case maxBytesPerSecond, maxConcurrent }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.maxBytesPerSecond) {
            maxBytesPerSecond = .some(try container.decodeNil(forKey: .maxBytesPerSecond)
                ? nil : try container.decode(Int64.self, forKey: .maxBytesPerSecond))
        }
        if container.contains(.maxConcurrent) {
            maxConcurrent = try container.decode(Int.self, forKey: .maxConcurrent)  // null is refused
        }
    }

    /// The change this body asks for.
    /// - Throws: `APIError(.invalidRequest)` naming the field at fault, or when the body changes nothing.
    func validated() throws(APIError) -> StoredSettings {
        if case .some(.some(let rate)) = maxBytesPerSecond, rate < 1 {
            throw APIError(.invalidRequest, "'maxBytesPerSecond' must be a positive number of bytes per second, or null for no limit")
        }
        let range = RuntimeSettings.maxConcurrentRange
        if let maxConcurrent, !range.contains(maxConcurrent) {
            throw APIError(.invalidRequest, "'maxConcurrent' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        let change = StoredSettings(maxBytesPerSecond: maxBytesPerSecond, maxConcurrent: maxConcurrent)
        guard !change.isEmpty else {
            throw APIError(.invalidRequest, "nothing to change: give 'maxBytesPerSecond' or 'maxConcurrent'")
        }
        return change
    }
}
