import Foundation

/// Where the client writes: one file descriptor (stdout or stderr), written with `write(2)` directly so nothing
/// sits in a buffer when the process ends on a signal, and so a line is never interleaved with another's.
///
/// A value holding a descriptor it does not own; used from the command's one thread.
public struct Console: Sendable {
    public let fd: Int32

    public static let standardOutput = Console(fd: STDOUT_FILENO)
    public static let standardError = Console(fd: STDERR_FILENO)

    public init(fd: Int32) { self.fd = fd }

    /// Whether a terminal is attached (then output is redrawn in place).
    public var isTerminal: Bool { isatty(fd) == 1 }

    /// The terminal's width in cells, nil when it cannot tell (not a terminal).
    public var columns: Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The terminal's height in lines, nil when it cannot tell.
    public var rows: Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Writes `text` as is. Errors (a closed pipe) are ignored: there is nowhere left to report them.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
        bytes.removeAll()
    }

    /// Writes `text` and a line break.
    public func line(_ text: String) { write(text + "\n") }

    /// The progress bar style the environment's locale can show: blocks for UTF-8 (or no locale set), else ASCII.
    public static func barStyle(environment: [String: String]) -> ProgressBar.Style {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let locale else { return .blocks }
        let lowered = locale.lowercased()
        return lowered.contains("utf-8") || lowered.contains("utf8") ? .blocks : .ascii
    }
}

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

/// What Ctrl-C (SIGINT) and SIGTERM do during a live display: show the cursor again (it may be hidden by a
/// `LiveRegion`), end the line, and exit with a fixed status right away.
public enum InterruptExit {
    /// Exit 0: the way to end `watch`.
    case success
    /// Exit 130 (128 + SIGINT), as shells report an interrupted command: `add --wait` stopped waiting.
    case interrupted

    public func install() {
        switch self {
        case .success:
            signal(SIGINT) { _ in InterruptExit.restoreTerminal(); _exit(0) }
            signal(SIGTERM) { _ in InterruptExit.restoreTerminal(); _exit(0) }
        case .interrupted:
            signal(SIGINT) { _ in InterruptExit.restoreTerminal(); _exit(130) }
            signal(SIGTERM) { _ in InterruptExit.restoreTerminal(); _exit(143) }
        }
    }

    /// Async-signal-safe (no allocation): one `write(2)` of a constant to the first of stdout and stderr that
    /// is a terminal.
    static func restoreTerminal() {
        let text: StaticString = "\u{1B}[?25h\n"
        let fd = isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : (isatty(STDERR_FILENO) == 1 ? STDERR_FILENO : -1)
        if fd >= 0 { _ = Glibc.write(fd, text.utf8Start, text.utf8CodeUnitCount) }
    }
}
