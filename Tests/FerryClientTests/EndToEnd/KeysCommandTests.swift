import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry keys add|ls|rm` against a running Ferry with the administrator's token.
    @Suite("ferry keys")
    struct KeysCommandTests {
        @Test func addListsAndRemovesAKey() async throws {
            try await withOriginAndFerry(token: "admin-s3cret") { _, ferry in
                let cli = FerryCLI(ferry: ferry)
                let added = try await cli.run(["keys", "add", "ci", "--scope", "write", "--max-active", "4"])
                #expect(added.status == 0, "\(added)")
                #expect(added.lines.count == 2, "\(added)")
                let fields = added.lines[0].components(separatedBy: "  ")
                let id = try #require(fields.first)
                #expect(fields.dropFirst().prefix(3) == ["ci", "write", "max-active 4"], "\(added)")
                #expect(added.lines[1].hasPrefix("token  fk_"), "\(added)")

                let listed = try await cli.run(["keys", "ls", "--json"])
                #expect(listed.status == 0, "\(listed)")
                let keys = try #require(try listed.jsonObject()["keys"] as? [[String: Any]])
                #expect(keys.map { $0["id"] as? String } == [id])
                #expect(keys[0]["token"] == nil)

                let refused = try await cli.run(["keys", "add", "x", "--scope", "root"])
                #expect(refused.status == 64, "\(refused)")
                let metered = try await cli.run(["keys", "add", "metered", "--bytes-per-day", "1GiB", "--spool-bytes", "500M",
                                                 "--max-bytes-per-second", "10MiB/s", "--json"])
                #expect(metered.status == 0, "\(metered)")
                let meteredLimits = try metered.jsonObject()["limits"] as? [String: Any]
                #expect(meteredLimits?["bytesPerDay"] as? Int == 1 << 30 && meteredLimits?["spoolBytes"] as? Int == 500_000_000
                        && meteredLimits?["maxBytesPerSecond"] as? Int == 10 << 20, "\(metered)")
                #expect(try await cli.run(["keys", "rm", try #require(try metered.jsonObject()["id"] as? String)]).status == 0)
                #expect(try await cli.run(["keys", "add", "y", "--bytes-per-day", "lots"]).status == 64)
                #expect(try await cli.run(["keys", "rm", id]).status == 0)
                #expect(try await cli.run(["keys", "ls"]).lines.isEmpty)
                #expect(try await cli.run(["keys", "rm", id]).status == 1)
            }
        }
    }
}
