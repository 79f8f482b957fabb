/// What the spool writes down while it moves a finished download into `files/`: enough for start-up
/// recovery to mark the job finished if the process died before the service stored that.
/// Text: `ferry-finish 1`, then `name`, `size` and `sha256` lines (the last with no value when the digest was not
/// yet known: recovery computes it).
public struct FinishRecord: Equatable, Sendable {
    public var filename: String
    public var size: Int64
    public var sha256: String?

    public init(filename: String, size: Int64, sha256: String?) {
        self.filename = filename
        self.size = size
        self.sha256 = sha256
    }

    var encoded: String { "ferry-finish 1\nname \(filename)\nsize \(size)\nsha256 \(sha256 ?? "")\n" }

    static func decode(_ text: String) -> FinishRecord? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 4, lines[0] == "ferry-finish 1", lines[1].hasPrefix("name "), lines[2].hasPrefix("size "),
              lines[3].hasPrefix("sha256 "), let size = Int64(lines[2].dropFirst(5)) else { return nil }
        let name = String(lines[1].dropFirst(5)), sha = String(lines[3].dropFirst(7))
        guard !name.isEmpty, !name.contains("/"), sha.isEmpty || sha.count == 64 else { return nil }
        return FinishRecord(filename: name, size: size, sha256: sha.isEmpty ? nil : sha)
    }
}
