/// The jobs as a table with a header row: `ls`, and `watch` on a terminal. Pure.
///
/// Columns: ID, STATE, DONE, SIZE, SPEED, ETA, NAME; each as wide as its widest cell. NAME comes last and is cut
/// to what `width` leaves (no cutting when `width` is nil, e.g. when writing to a pipe). With a `bar` style, DONE
/// carries a small progress bar before the percentage.
public struct JobTable: Sendable {
    public var width: Int?
    public var bar: ProgressBar.Style?

    public init(width: Int? = nil, bar: ProgressBar.Style? = nil) {
        self.width = width
        self.bar = bar
    }

    public func render(_ jobs: [Job]) -> [String] {
        let headers = ["ID", "STATE", "DONE", "SIZE", "SPEED", "ETA", "NAME"]
        var rows: [[String]] = [headers]
        for job in jobs {
            let cells = JobCells(job)
            var done = cells.percent
            if let bar {
                done = ProgressBar(width: 10, style: bar).render(cells.fraction) + " "
                    + TerminalText.rightAligned(done, to: 4)
            }
            var name = cells.target.isEmpty ? cells.name : cells.name + "  " + cells.target
            if !cells.note.isEmpty { name += "  (" + cells.note + ")" }
            rows.append([cells.id, cells.state, done, cells.size, cells.speed, cells.eta, name])
        }
        let widths = headers.indices.map { column in rows.map { TerminalText.width($0[column]) }.max() ?? 0 }
        // SPEED and ETA are left out while no job is downloading.
        let shown = (0..<(headers.count - 1)).filter { column in
            column < 4 || rows.dropFirst().contains { !$0[column].isEmpty }
        }
        let rightAligned: Set<Int> = bar == nil ? [2, 3, 4] : [3, 4]
        return rows.map { row in
            let parts = shown.map { column in
                rightAligned.contains(column)
                    ? TerminalText.rightAligned(row[column], to: widths[column])
                    : TerminalText.padded(row[column], to: widths[column])
            }
            let line = parts.joined(separator: "  ") + "  "
            let name = row[row.count - 1]
            guard let width else { return line + name }
            let room = width - TerminalText.width(line)
            return room > 0 ? line + TerminalText.truncated(name, to: room) : TerminalText.truncated(line, to: width)
        }
    }
}
