/// What `watch` shows on a terminal: a title with totals, then the table, busiest jobs first, cut to the
/// terminal's height with a "… N more" line. Pure.
public struct WatchScreen: Sendable {
    public var title: String
    public var width: Int
    public var height: Int
    public var style: ProgressBar.Style

    public init(title: String, width: Int, height: Int, style: ProgressBar.Style) {
        self.title = title
        self.width = max(20, width)
        self.height = max(4, height)
        self.style = style
    }

    /// States in the order `watch` lists them: what moves first, what has ended last.
    static func rank(_ state: JobState) -> Int {
        switch state {
        case .downloading, .delivering: 0
        case .waiting: 1
        case .paused: 2
        case .failed: 3
        case .other: 4
        case .finished: 5
        case .cancelled: 6
        }
    }

    public func render(_ jobs: [Job]) -> [String] {
        let ordered = jobs.enumerated().sorted {
            (Self.rank($0.element.state), $0.offset) < (Self.rank($1.element.state), $1.offset)
        }.map(\.element)
        let downloading = jobs.filter { $0.state == .downloading }
        let speed = downloading.reduce(0) { $0 + $1.speed }
        var summary = "\(title)  ·  \(jobs.count) job\(jobs.count == 1 ? "" : "s")"
        if !downloading.isEmpty { summary += "  ·  \(downloading.count) downloading at \(HumanUnits.speed(speed))" }
        let delivering = jobs.filter { $0.state == .delivering }
        if !delivering.isEmpty {
            let upload = delivering.reduce(0) { $0 + ($1.delivery?.speed ?? 0) }
            summary += "  ·  \(delivering.count) delivering at \(HumanUnits.speed(upload))"
        }
        summary += "  ·  Ctrl-C to quit"
        // The title, the header row, and one line for "… N more" fit besides the rows.
        let room = height - 3
        let shown = ordered.count > room + 1 ? Array(ordered.prefix(room)) : ordered
        var lines = [TerminalText.truncated(summary, to: width)]
        lines += JobTable(width: width, bar: style).render(shown)
        if shown.count < ordered.count { lines.append("… \(ordered.count - shown.count) more") }
        return lines
    }
}
