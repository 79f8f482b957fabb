import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry add --tag`, `ferry ls --tag` and `ferry ls --search`/`-q` against a running Ferry (jobs added paused).
    @Suite("ferry add --tag, ls --tag, ls --search")
    struct TagCommandTests {
        @Test func tagsAreAddedShownAndFilteredOn() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let tagged = try await cli.run(["add", origin.url("/Season-1.mkv"), origin.url("/Season-2.mkv"),
                                                "--tag", "tv", "--tag", "Sci Fi", "--paused"])
                #expect(tagged.status == 0, "\(tagged)")
                let taggedIDs = tagged.lines
                #expect(taggedIDs.count == 2)
                let other = try await cli.add(origin.url("/notes.txt"), ["--tag", "docs", "--paused"])
                let plain = try await cli.add(origin.url("/plain.bin"), ["--paused"])

                #expect(try await cli.job(taggedIDs[0])["tags"] as? [String] == ["tv", "Sci Fi"])
                #expect(try await cli.job(plain)["tags"] as? [String] == [])

                func listed(_ arguments: [String]) async throws -> [String] {
                    let result = try await cli.run(["ls", "--json"] + arguments)
                    #expect(result.status == 0, "\(result)")
                    let jobs = try #require(try result.jsonObject()["jobs"] as? [[String: Any]], "\(result)")
                    return jobs.compactMap { $0["id"] as? String }
                }
                #expect(try await listed(["--tag", "tv"]) == taggedIDs)
                #expect(try await listed(["--tag", "Sci Fi"]) == taggedIDs)  // a space travels encoded
                #expect(try await listed(["--tag", "docs"]) == [other])
                #expect(try await listed(["--tag", "TV"]).isEmpty)
                #expect(try await listed(["--search", "SEASON-2"]) == [taggedIDs[1]])
                #expect(try await listed(["-q", ".mkv", "--tag", "tv", "--state", "paused"]) == taggedIDs)
                #expect(try await listed(["-q", "plain"]) == [plain])
                #expect(try await listed(["-q", "nothing like it"]).isEmpty)

                // The table lists the filtered jobs only; `show` names the tags.
                let table = try await cli.run(["ls", "--tag", "docs"])
                #expect(table.lines.count == 2 && table.lines[1].hasPrefix(other), "\(table)")
                let shown = try await cli.run(["show", taggedIDs[0]])
                #expect(shown.lines.contains { $0.hasPrefix("tags:") && $0.hasSuffix("tv, Sci Fi") }, "\(shown)")
            }
        }

        @Test func aTagTheServerRefusesIsReportedWithItsMessage() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let tooMany = (0...16).flatMap { ["--tag", "t\($0)"] }
                let refused = try await cli.run(["add", origin.url("/x.bin"), "--paused"] + tooMany)
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("at most 16"), "\(refused)")
                #expect(refused.stderr.contains("invalid_request"), "\(refused)")
                let long = try await cli.run(["add", origin.url("/x.bin"), "--paused", "--tag", String(repeating: "y", count: 65)])
                #expect(long.status == 1, "\(long)")
                #expect(long.stderr.contains("1 to 64 characters"), "\(long)")
            }
        }
    }
}
