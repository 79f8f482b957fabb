/// The body of `PATCH /api/v1/jobs/{id}`: `null` for `maxBytesPerSecond` removes the limit.
struct PatchBody: Decodable {
    var priority: Int?
    var maxBytesPerSecond: Int64??
    var url: String?

    enum CodingKeys: String, CodingKey { case priority, maxBytesPerSecond, url }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        if container.contains(.maxBytesPerSecond) {
            maxBytesPerSecond = .some(try container.decodeNil(forKey: .maxBytesPerSecond)
                ? nil : try container.decode(Int64.self, forKey: .maxBytesPerSecond))
        }
    }
}
