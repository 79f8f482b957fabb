/// The rules of a job's `tags` (API.md, "Downloader options"): at most 16, each 1 to 64 characters, no control
/// characters; kept as given (order, case and repeats). Used by `JobDraft` (create) and `PATCH`. Pure.
///
/// A character is a Unicode scalar, as JSON Schema's `maxLength` counts (the OpenAPI document says 64 too).
enum TagList {
    static let maxCount = 16
    static let maxLength = 64

    /// The tags as given, or an `invalid_request` naming the one at fault.
    static func validate(_ tags: [String]) throws(APIError) -> [String] {
        guard tags.count <= maxCount else {
            throw APIError(.invalidRequest, "'tags' may hold at most \(maxCount) tags (\(tags.count) given)")
        }
        for (index, tag) in tags.enumerated() {
            let length = tag.unicodeScalars.count
            guard (1...maxLength).contains(length) else {
                throw APIError(.invalidRequest,
                               "'tags[\(index)]' must be 1 to \(maxLength) characters (\(length) given)")
            }
            guard !tag.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw APIError(.invalidRequest, "'tags[\(index)]' may not contain control characters")
            }
        }
        return tags
    }
}
