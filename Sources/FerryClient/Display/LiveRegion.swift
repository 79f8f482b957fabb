import Foundation

/// A block of lines redrawn in place at the bottom of a terminal (ANSI cursor movement): each `draw` replaces
/// what the previous one drew. Hides the cursor while live; `finish()` shows it again and leaves the last frame
/// on screen. Owned by one command on one thread.
public final class LiveRegion {
    private let console: Console
    private var drawnLines = 0
    private var live = false

    public init(console: Console) { self.console = console }

    /// Replaces the previous frame with `lines` (each must fit the terminal's width, or wrapping breaks the count).
    public func draw(_ lines: [String]) {
        var frame = ""
        if !live {
            frame += "\u{1B}[?25l"
            live = true
        }
        if drawnLines > 0 { frame += "\r\u{1B}[\(drawnLines)A" }
        for line in lines { frame += "\u{1B}[2K" + line + "\n" }
        frame += "\u{1B}[J"
        drawnLines = lines.count
        console.write(frame)
    }

    /// Shows the cursor again; the last frame stays.
    public func finish() {
        guard live else { return }
        console.write("\u{1B}[?25h")
        live = false
    }
}
