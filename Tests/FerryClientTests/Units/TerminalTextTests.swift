@testable import FerryClient
import Testing

@Suite("Terminal text")
struct TerminalTextTests {
    @Test func controlCharactersCannotReachTheTerminal() {
        #expect(TerminalText.sanitized("a\u{1B}[31mred\u{07}\n") == "a?[31mred??")
        #expect(TerminalText.sanitized("x\u{9B}y\u{7F}") == "x?y?")
        #expect(TerminalText.sanitized("名前.bin") == "名前.bin")
    }

    @Test func widthsCountWideCharactersTwice() {
        #expect(TerminalText.width("abc") == 3)
        #expect(TerminalText.width("名前") == 4)
        #expect(TerminalText.width("e\u{301}") == 1)
        #expect(TerminalText.width("█▏") == 2)
    }

    @Test func truncationEndsInAnEllipsis() {
        #expect(TerminalText.truncated("abcdef", to: 6) == "abcdef")
        #expect(TerminalText.truncated("abcdefg", to: 6) == "abcde…")
        #expect(TerminalText.truncated("名前名前", to: 5) == "名前…")
        #expect(TerminalText.truncated("abc", to: 0) == "")
    }

    @Test func padding() {
        #expect(TerminalText.padded("ab", to: 4) == "ab  ")
        #expect(TerminalText.padded("abcdef", to: 4) == "abc…")
        #expect(TerminalText.rightAligned("7%", to: 4) == "  7%")
        #expect(TerminalText.rightAligned("100%", to: 3) == "100%")
    }
}
