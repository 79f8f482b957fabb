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
