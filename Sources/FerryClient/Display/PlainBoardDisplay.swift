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
