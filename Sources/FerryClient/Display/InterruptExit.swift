import Foundation

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
