import Testing
@testable import FerryService

/// `TagList`: the rules of a job's tags, at their edges.
@Suite("Tag list rules")
struct TagListTests {
    @Test func tagsAreKeptAsGivenUpToTheLimits() throws {
        #expect(try TagList.validate([]) == [])
        #expect(try TagList.validate(["b", "A", "b"]) == ["b", "A", "b"])
        let longest = [String(repeating: "é", count: 64)]
        #expect(try TagList.validate(longest) == longest)
        let sixteen = (1...16).map { "t\($0)" }
        #expect(try TagList.validate(sixteen) == sixteen)
    }

    @Test(arguments: [
        ((1...17).map { "t\($0)" }, "at most 16"),
        ([String(repeating: "x", count: 65)], "'tags[0]' must be 1 to 64 characters (65 given)"),
        (["ok", ""], "'tags[1]' must be 1 to 64 characters (0 given)"),
        (["tab\there"], "control characters"),
        (["nul\u{0}"], "control characters"),
        (["c1\u{85}"], "control characters"),
    ])
    func badTagsNameTheirFault(tags: [String], message: String) {
        do {
            _ = try TagList.validate(tags)
            Issue.record("accepted \(tags)")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
