/// The finish records of several jobs moved into `files/` together, kept in one file
/// (`partial/<uuid>.finishes`) so that a group of finishes costs one small file, not one per job.
/// Text: `ferry-finishes 1`, then per job a `job` line followed by the `name`, `size` and `sha256` lines
/// of its `FinishRecord`. A `FinishLog` holds several groups one after the other (`decodeLog`). Pure value; `Spool`
/// writes, reads and removes the files.
struct FinishRecordGroup: Equatable, Sendable {
    /// Records by job id, in the order they were written.
    var records: [(jobID: String, record: FinishRecord)]

    static func == (a: FinishRecordGroup, b: FinishRecordGroup) -> Bool {
        a.records.count == b.records.count && zip(a.records, b.records).allSatisfy { $0.jobID == $1.jobID && $0.record == $1.record }
    }

    var encoded: String {
        var text = "ferry-finishes 1\n"
        for (jobID, record) in records {
            text += "job \(jobID)\n"
            text += record.encoded.dropFirst("ferry-finish 1\n".count)
        }
        return text
    }

    /// The group, or nil when the text is not a whole group file of this version.
    static func decode(_ text: String) -> FinishRecordGroup? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == "ferry-finishes 1", lines.last == "", (lines.count - 2) % 4 == 0 else { return nil }
        var records: [(jobID: String, record: FinishRecord)] = []
        var index = 1
        while index + 4 <= lines.count - 1 {
            let jobLine = lines[index]
            guard jobLine.hasPrefix("job ") else { return nil }
            let jobID = String(jobLine.dropFirst(4))
            guard !jobID.isEmpty, !jobID.contains("/") else { return nil }
            let block = "ferry-finish 1\n" + lines[(index + 1)...(index + 3)].joined(separator: "\n") + "\n"
            guard let record = FinishRecord.decode(block) else { return nil }
            records.append((jobID, record))
            index += 4
        }
        return FinishRecordGroup(records: records)
    }

    /// The whole groups of a log file (`FinishLog`: groups one after the other; a file of one group is a log too).
    /// A group that does not decode (the torn end of a crash) is left out; complete lines only.
    static func decodeLog(_ text: String) -> [FinishRecordGroup] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last "\n": empty, or a line cut short
        var groups: [FinishRecordGroup] = []
        var start: Int?
        func close(at end: Int) {
            guard let first = start else { return }
            let block = lines[first..<end].joined(separator: "\n") + "\n"
            if let group = decode(block) { groups.append(group) }
        }
        for (index, line) in lines.enumerated() where line == "ferry-finishes 1" {
            close(at: index)
            start = index
        }
        close(at: lines.count)
        return groups
    }
}
