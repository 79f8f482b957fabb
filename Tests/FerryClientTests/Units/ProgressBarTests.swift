@testable import FerryClient
import Testing

@Suite("Progress bar")
struct ProgressBarTests {
    @Test func blocksFillInEighths() {
        let bar = ProgressBar(width: 12, style: .blocks)
        #expect(bar.render(0) == "▕          ▏")
        #expect(bar.render(1) == "▕██████████▏")
        #expect(bar.render(0.5) == "▕█████     ▏")
        #expect(bar.render(0.0125) == "▕▏         ▏")
        #expect(bar.render(0.55) == "▕█████▌    ▏")
        #expect(bar.render(2) == bar.render(1))
        #expect(bar.render(-1) == bar.render(0))
    }

    @Test func asciiForTerminalsWithoutUTF8() {
        let bar = ProgressBar(width: 10, style: .ascii)
        #expect(bar.render(0.5) == "[####----]")
        #expect(bar.render(1) == "[########]")
        #expect(bar.render(nil) == "[........]")
    }

    @Test func unknownLengthIsAShadedTrack() {
        #expect(ProgressBar(width: 6).render(nil) == "▕░░░░▏")
        #expect(ProgressBar(width: 6).render(.nan) == "▕░░░░▏")
    }

    @Test func everyRenderingIsExactlyItsWidth() {
        for width in 0...30 {
            for step in 0...64 {
                let fraction = Double(step) / 64
                for style in [ProgressBar.Style.blocks, .ascii] {
                    let text = ProgressBar(width: width, style: style).render(fraction)
                    #expect(TerminalText.width(text) == width, "width \(width), \(fraction), \(style)")
                }
            }
        }
    }
}
