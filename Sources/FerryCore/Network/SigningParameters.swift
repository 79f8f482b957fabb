/// Query parameters that sign a link or make it expire (S3 and GCS presigned URLs, CloudFront signed URLs): two
/// links differing only in them name the same object (API.md: dedupe, and fetch-through's cache key).
///
/// Pure.
public enum SigningParameters {
    /// The names, compared without regard to case.
    public static let names: Set<String> = [
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-signature", "x-amz-security-token", "x-goog-algorithm", "x-goog-credential", "x-goog-date",
        "x-goog-expires", "x-goog-signedheaders", "x-goog-signature", "expires", "signature", "key-pair-id", "policy",
    ]

    /// `pathAndQuery` (a path, then `?` and the query, no fragment) without the signing parameters; without the `?`
    /// when none other is left. Other parameters keep their order and spelling.
    public static func removed(from pathAndQuery: String) -> String {
        removed(from: pathAndQuery, also: [])
    }

    /// `pathAndQuery` without the signing parameters nor the parameters named in `also` (lower-cased: the
    /// `--cache-key-ignore` names, `CacheKeyRule`).
    public static func removed(from pathAndQuery: String, also: Set<String>) -> String {
        guard let mark = pathAndQuery.firstIndex(of: "?") else { return pathAndQuery }
        let query = pathAndQuery[pathAndQuery.index(after: mark)...]
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false)
        let kept = pairs.filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let lowered = name.lowercased()
            return !names.contains(lowered) && !also.contains(lowered)
        }
        guard kept.count != pairs.count else { return pathAndQuery }
        let path = pathAndQuery[..<mark]
        return kept.isEmpty ? String(path) : path + "?" + kept.joined(separator: "&")
    }
}
