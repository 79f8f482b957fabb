/// What a segmented download stores next to its partial file (`partial/<id>.segments`) so that pause, resume,
/// a retry, a restart of the process or a crash continue every segment where it was.
///
/// Pure value: `encoded()` and `decode(_:)` only. The text is line-based, versioned and readable:
///
/// ```
/// ferry-segments 1
/// total 33554432
/// validator "5f3a1c-2000000"
/// segment 0 8388608 8388608
/// segment 8388608 16777216 9437184
/// segment 16777216 33554432 20971520
/// ```
///
/// `validator` is the `If-Range` value the bytes belong to (a strong ETag, else Last-Modified); each `segment`
/// line is `start end next` (bytes `[start, next)` of `[start, end)` written). A segment's `next` is only ever
/// stored after those bytes were written and synced, so the file may hold more than the sidecar says, never
/// less. The engine writes the file atomically (temp file, fsync, rename); `decode` rejects anything malformed
/// (a torn or foreign file), and the caller then starts the file over.
struct SegmentSidecar: Equatable, Sendable {
    static let header = "ferry-segments 1"

    /// The `If-Range` value of the representation the bytes come from.
    var validator: String
    var table: SegmentTable

    /// The stored form (the table compacted first).
    func encoded() -> String {
        var lines = [Self.header, "total \(table.total)", "validator \(validator)"]
        for segment in table.compacted().segments {
            lines.append("segment \(segment.start) \(segment.end) \(segment.next)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The sidecar in `text`, or nil when it is not exactly the format above with a consistent table.
    static func decode(_ text: String) -> SegmentSidecar? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.last == "" else { return nil }  // a torn write lacks the final newline
        lines.removeLast()
        guard lines.count >= 4, lines[0] == header,
              lines[1].hasPrefix("total "), let total = Int64(lines[1].dropFirst(6)),
              lines[2].hasPrefix("validator ") else { return nil }
        let validator = String(lines[2].dropFirst(10))
        guard !validator.isEmpty, !validator.contains("\r") else { return nil }
        var segments: [SegmentTable.Segment] = []
        for line in lines[3...] {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 4, fields[0] == "segment",
                  let start = Int64(fields[1]), let end = Int64(fields[2]), let next = Int64(fields[3]) else { return nil }
            segments.append(SegmentTable.Segment(start: start, end: end, next: next))
        }
        guard let table = SegmentTable(total: total, segments: segments) else { return nil }
        return SegmentSidecar(validator: validator, table: table)
    }
}
