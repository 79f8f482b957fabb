/// The body of `PATCH /api/v1/jobs/{id}`: `null` for `maxBytesPerSecond` removes the limit.
struct PatchBody: Decodable {
    var priority: Int?
    var maxBytesPerSecond: Int64??
    var url: String?
    var tags: [String]?

    enum CodingKeys: String, CodingKey { case priority, maxBytesPerSecond, url, tags }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        tags = try container.decodeIfPresent([String].self, forKey: .tags)
        if container.contains(.maxBytesPerSecond) {
            maxBytesPerSecond = .some(try container.decodeNil(forKey: .maxBytesPerSecond)
                ? nil : try container.decode(Int64.self, forKey: .maxBytesPerSecond))
        }
    }
}
