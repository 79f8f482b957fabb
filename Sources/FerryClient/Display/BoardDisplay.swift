import Foundation

/// Shows a `JobBoard` as events change it: `add --wait` and `watch`.
///
/// Apply the event first, then hand over the board: in `display.update(board, change: board.apply(event))` the
/// first argument is evaluated, a copy of the board as it was, before `apply` runs.
public protocol BoardDisplay: AnyObject {
    /// The board changed (`change` says how; a fresh listing reports `.state("")`).
    func update(_ board: JobBoard, change: JobBoard.Change)
    /// Called about once a second and after each chunk of events, to flush a held-back redraw.
    func tick(_ board: JobBoard)
    /// The last word: draw the final state and leave the terminal as it was.
    func finish(_ board: JobBoard)
}

/// Line per change, for pipes and logs: a job's `JobCells.plainLine` each time it differs from the line last
/// printed for that job, and `ID  removed` when one is deleted. Writes to its console; one thread.
public final class PlainBoardDisplay: BoardDisplay {
    private let console: Console
    private var lastLines: [String: String] = [:]

    public init(console: Console) { self.console = console }

    public func update(_ board: JobBoard, change: JobBoard.Change) {
        switch change {
        case .none:
            return
        case .removed(let id):
            if lastLines.removeValue(forKey: id) != nil || board.removedIDs.contains(id) {
                console.line(TerminalText.sanitized(id) + "  removed")
            }
        case .state(let id) where id.isEmpty:
            for job in board.jobs { print(job) }
        case .state(let id), .progress(let id):
            if let job = board[id] { print(job) }
        }
    }

    public func tick(_ board: JobBoard) {}

    public func finish(_ board: JobBoard) {}

    private func print(_ job: Job) {
        let line = JobCells(job).plainLine
        guard lastLines[job.id] != line else { return }
        lastLines[job.id] = line
        console.line(line)
    }
}

/// Redraws in place on a terminal, at most every `minimumInterval` seconds (events can come in bursts):
/// one progress line per job (`add --wait`), or a header and a table of every job (`watch`). One thread.
public final class LiveBoardDisplay: BoardDisplay {
    public enum Layout {
        /// `ProgressLines`: name, bar, percentage, size, speed, time left.
        case progressLines
        /// A title line and a `JobTable` with bars, cut to the terminal's height.
        case table(title: String)
    }

    private let console: Console
    private let region: LiveRegion
    private let layout: Layout
    private let style: ProgressBar.Style
    private let minimumInterval: Double
    private let now: () -> Double
    private var lastDraw = -Double.infinity
    private var dirty = false

    public init(console: Console, layout: Layout, style: ProgressBar.Style, minimumInterval: Double = 0.1,
                now: @escaping () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.console = console
        self.region = LiveRegion(console: console)
        self.layout = layout
        self.style = style
        self.minimumInterval = minimumInterval
        self.now = now
    }

    public func update(_ board: JobBoard, change: JobBoard.Change) {
        if change == .none { return }
        dirty = true
        if case .state = change { draw(board) } else { tick(board) }
    }

    public func tick(_ board: JobBoard) {
        guard dirty, now() - lastDraw >= minimumInterval else { return }
        draw(board)
    }

    public func finish(_ board: JobBoard) {
        draw(board)
        region.finish()
    }

    private func draw(_ board: JobBoard) {
        dirty = false
        lastDraw = now()
        let width = console.columns ?? 80
        switch layout {
        case .progressLines:
            region.draw(ProgressLines(width: width, style: style).render(board.jobs))
        case .table(let title):
            region.draw(WatchScreen(title: title, width: width, height: console.rows ?? 24, style: style)
                .render(board.jobs))
        }
    }
}

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
        case .downloading: 0
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
