extension StringProtocol {
    /// The text without leading and trailing ASCII spaces, tabs, CR and LF.
    func trimmingASCIIWhitespace() -> Substring {
        let whole = self[...]
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = whole.firstIndex(where: { !isSpace($0) }), let last = whole.lastIndex(where: { !isSpace($0) }) else {
            return Substring()
        }
        return Substring(whole[first...last])
    }
}

extension String {
    /// The string without the given scalars at either end.
    func trimmingCharacters(inSet set: Set<Unicode.Scalar>) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !set.contains($0) }),
              let last = scalars.lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(scalars[first...last])
    }
}
