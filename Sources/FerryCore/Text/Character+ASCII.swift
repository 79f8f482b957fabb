extension Character {
    /// True for the ASCII digits 0-9 only (not other Unicode numbers).
    var isASCIIDigit: Bool { isASCII && isNumber }
}
