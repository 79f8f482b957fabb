/// Hands back one shared instance for equal strings, so that many records holding the same text (the same URL
/// in thousands of jobs, a URL and its identical dedupe key, a common content type) keep one copy of it.
///
/// Pure value; use one per batch of work (a query reading many rows) and drop it afterwards: it keeps at most
/// `limit` distinct strings alive on its own, and strings no record kept are released with it.
struct StringInterner {
    private var seen: Set<String> = []
    private var last: String?
    let limit: Int

    init(limit: Int = 65_536) {
        self.limit = limit
    }

    /// `text`, or an equal string interned before (sharing its storage).
    mutating func intern(_ text: String) -> String {
        // Up to 15 UTF-8 bytes a string is stored inline: nothing to share.
        if text.utf8.count <= 15 { return text }
        if let last, last == text { return last }
        if let index = seen.firstIndex(of: text) {
            let shared = seen[index]
            last = shared
            return shared
        }
        if seen.count < limit { seen.insert(text) }
        last = text
        return text
    }

    /// How many distinct strings it holds.
    var count: Int { seen.count }
}
