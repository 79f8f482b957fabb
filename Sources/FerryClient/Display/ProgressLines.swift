/// A live progress line per job for `add --wait` on a terminal:
/// `a.bin  ██████▌      52%  5.2 MiB/10.0 MiB  1.2 MiB/s  ETA 4s`, and for a job with an onward delivery a second
/// line, the upload's: `to dav.example.org  ███▌   26%  sent 2.6 MiB/10.0 MiB  3.1 MiB/s  ETA 3s`. Pure.
public struct ProgressLines: Sendable {
    /// Terminal width in cells.
    public var width: Int
    public var style: ProgressBar.Style

    public init(width: Int, style: ProgressBar.Style) {
        self.width = max(20, width)
        self.style = style
    }

    /// One line per job, each at most `width` cells.
    public func render(_ jobs: [Job]) -> [String] {
        let groups = jobs.map { job in
            job.delivery == nil ? [JobCells(job)] : [JobCells(job, part: .download), JobCells(job, part: .upload)]
        }
        let nameWidth = min(30, max(8, groups.joined().map { TerminalText.width($0.name) }.max() ?? 8))
        return groups.flatMap { group in
            // A job's download and upload bars are as wide as each other, when both have room for one.
            let shared = group.map { room($0, nameWidth: nameWidth) }.min() ?? 40
            return group.map { line($0, nameWidth: nameWidth, barLimit: shared >= 10 ? shared : 40) }
        }
    }

    /// The cells a line leaves for its bar, at most 40.
    func room(_ cells: JobCells, nameWidth: Int) -> Int {
        min(40, width - (nameWidth + 2 + 2 + 4 + 2 + TerminalText.width(status(cells))))
    }

    func status(_ cells: JobCells) -> String {
        switch cells.state {
        case "downloading", "sending":
            [cells.size, cells.speed, "ETA " + cells.eta].joined(separator: "  ")
        default:
            [cells.size, cells.state, cells.note].filter { !$0.isEmpty }.joined(separator: "  ")
        }
    }

    func line(_ cells: JobCells, nameWidth: Int, barLimit: Int = 40) -> String {
        let status = status(cells)
        let percent = TerminalText.rightAligned(cells.percent, to: 4)
        let barWidth = min(barLimit, room(cells, nameWidth: nameWidth))
        var line = TerminalText.padded(cells.name, to: nameWidth) + "  "
        if barWidth >= 10 {
            line += ProgressBar(width: barWidth, style: style).render(cells.fraction) + "  "
        }
        line += percent + "  " + status
        return TerminalText.truncated(line, to: width)
    }
}
