import Foundation

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
