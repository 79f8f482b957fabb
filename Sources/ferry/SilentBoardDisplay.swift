import FerryClient

/// Shows nothing (`add --wait --json` into a pipe).
final class SilentBoardDisplay: BoardDisplay {
    func update(_ board: JobBoard, change: JobBoard.Change) {}
    func tick(_ board: JobBoard) {}
    func finish(_ board: JobBoard) {}
}
