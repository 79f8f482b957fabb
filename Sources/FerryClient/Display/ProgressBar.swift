/// A progress bar of a fixed number of terminal cells, ends included. Pure.
///
/// With `.blocks`, `▕███▌    ▏`: a cell is split in eighths (`█▉▊▋▌▍▎▏`) so the bar moves smoothly; `.ascii`,
/// `[###-----]`, is for terminals without UTF-8. An unknown fraction (no length from the origin) draws a shaded
/// (`░`) or dotted track.
public struct ProgressBar: Sendable, Equatable {
    public enum Style: Sendable, Equatable { case blocks, ascii }

    public var width: Int
    public var style: Style

    public init(width: Int, style: Style = .blocks) {
        self.width = max(0, width)
        self.style = style
    }

    private static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// Exactly `width` cells for `fraction` (clamped to 0...1); nil draws the unknown-length bar. Below 3
    /// cells there is no room for a bar: blanks.
    public func render(_ fraction: Double?) -> String {
        guard width >= 3 else { return String(repeating: " ", count: width) }
        let (open, close) = style == .blocks ? ("▕", "▏") : ("[", "]")
        return open + track(fraction, width: width - 2) + close
    }

    private func track(_ fraction: Double?, width: Int) -> String {
        guard let fraction, fraction.isFinite else {
            return String(repeating: style == .blocks ? "░" : ".", count: width)
        }
        let clamped = min(1, max(0, fraction))
        switch style {
        case .ascii:
            let full = Int((clamped * Double(width)).rounded(.down))
            return String(repeating: "#", count: full) + String(repeating: "-", count: width - full)
        case .blocks:
            let eighthsTotal = Int((clamped * Double(width * 8)).rounded(.down))
            let full = eighthsTotal / 8
            let partial = eighthsTotal % 8
            var bar = String(repeating: "█", count: full)
            var used = full
            if partial > 0, used < width {
                bar += Self.eighths[partial]
                used += 1
            }
            return bar + String(repeating: " ", count: width - used)
        }
    }
}
