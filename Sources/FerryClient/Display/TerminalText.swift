/// Text measured and cut in terminal cells, and made safe to print. Pure.
public enum TerminalText {
    /// `text` with control characters (C0, DEL, C1: escape sequences a hostile name could carry) replaced by
    /// "?", so printing it cannot move the cursor or recolour the terminal.
    public static func sanitized(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            out.append(value < 0x20 || (value >= 0x7F && value < 0xA0) ? "?" : scalar)
        }
        return String(out)
    }

    /// Cells `text` takes: 2 for wide East Asian characters and most emoji, 0 for combining marks, else 1.
    public static func width(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        let value = first.value
        if first.properties.generalCategory == .nonspacingMark || first.properties.generalCategory == .enclosingMark {
            return 0
        }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// `text` cut to at most `cells` cells, ending in "…" when something was cut.
    public static func truncated(_ text: String, to cells: Int) -> String {
        guard cells > 0 else { return "" }
        if width(text) <= cells { return text }
        var out = ""
        var used = 0
        for character in text {
            let w = width(of: character)
            if used + w > cells - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }

    /// `text` padded with spaces on the right (or cut) to exactly `cells` cells.
    public static func padded(_ text: String, to cells: Int) -> String {
        let cut = truncated(text, to: cells)
        return cut + String(repeating: " ", count: max(0, cells - width(cut)))
    }

    /// `text` padded with spaces on the left to at least `cells` cells.
    public static func rightAligned(_ text: String, to cells: Int) -> String {
        String(repeating: " ", count: max(0, cells - width(text))) + text
    }
}
