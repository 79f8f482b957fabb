import FerryCore
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
        _ = DescriptorWriter.writeAll(fd, text)
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
