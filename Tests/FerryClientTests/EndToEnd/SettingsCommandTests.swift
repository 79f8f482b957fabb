import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry settings`: shows and changes `GET`/`PATCH /api/v1/settings` of a running Ferry.
    @Suite("ferry settings")
    struct SettingsCommandTests {
        @Test func showsChangesAndRemovesTheLimit() async throws {
            try await withOriginAndFerry { _, ferry in
                let cli = FerryCLI(ferry: ferry)
                let shown = try await cli.run(["settings"])
                #expect(shown.status == 0, "\(shown)")
                #expect(shown.lines == ["speed limit  none", "at once      4"], "\(shown)")

                let changed = try await cli.run(["settings", "--max-bytes-per-second", "5MiB/s", "--max-concurrent", "2", "--json"])
                #expect(changed.status == 0, "\(changed)")
                let object = try changed.jsonObject()
                #expect(object["maxBytesPerSecond"] as? Int == 5 << 20)
                #expect(object["maxConcurrent"] as? Int == 2)
                let served = try await cli.get("/api/v1/settings")
                #expect(served.status == 200)

                let human = try await cli.run(["settings"])
                #expect(human.lines.first?.hasPrefix("speed limit  ") == true && human.lines.first?.contains("5242880") == true, "\(human)")
                #expect(human.lines.last == "at once      2", "\(human)")

                let removed = try await cli.run(["settings", "--max-bytes-per-second", "none"])
                #expect(removed.status == 0, "\(removed)")
                #expect(removed.lines == ["speed limit  none", "at once      2"], "\(removed)")
            }
        }

        @Test func badValuesAreRefusedBeforeAnyRequest() async throws {
            try await withOriginAndFerry { _, ferry in
                let cli = FerryCLI(ferry: ferry)
                for arguments in [["--max-bytes-per-second", "fast"], ["--max-bytes-per-second", "0"], ["--max-concurrent", "0"],
                                  ["--max-concurrent", "5000"]] {
                    let result = try await cli.run(["settings"] + arguments)
                    #expect(result.status == 64, "\(arguments): \(result)")
                }
                #expect(try await cli.requestCount(route: "/api/v1/settings", method: "PATCH", status: 200) == 0)
                #expect(try await cli.run(["settings"]).lines.last == "at once      4")
            }
        }
    }
}
