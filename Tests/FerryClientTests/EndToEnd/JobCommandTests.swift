import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ls`, `show`, `pause`, `resume`, `cancel` and `rm` against a job in flight.
    @Suite("ferry ls, show, pause, resume, cancel, rm")
    struct JobCommandTests {
        @Test func aJobTakenThroughEveryAction() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "slow.bin", size: 2_000_000, seed: 6)
                let cli = FerryCLI(ferry: ferry)
                let id = try await cli.add(origin.url("/slow/slow.bin?rate=200000"))
                try await cli.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 0 }

                let paused = try await cli.run(["pause", id])
                #expect(paused.status == 0, "\(paused)")
                #expect(paused.stdout == "\(id)  paused\n")

                let shown = try await cli.run(["show", id, "--json"])
                #expect(shown.status == 0, "\(shown)")
                #expect(try shown.jsonObject()["state"] as? String == "paused")

                let human = try await cli.run(["show", id])
                #expect(human.lines.contains("id:        \(id)") || human.lines.contains { $0.hasPrefix("id:") && $0.hasSuffix(id) }, "\(human)")
                #expect(human.lines.contains { $0.hasPrefix("state:") && $0.hasSuffix("paused") }, "\(human)")

                let listed = try await cli.run(["ls", "--state", "paused", "--json"])
                #expect(listed.status == 0, "\(listed)")
                let jobs = try #require(try listed.jsonObject()["jobs"] as? [[String: Any]])
                #expect(jobs.map { $0["id"] as? String } == [id])
                let none = try await cli.run(["ls", "--state", "finished", "--json"])
                #expect((try none.jsonObject()["jobs"] as? [Any])?.isEmpty == true, "\(none)")

                let table = try await cli.run(["ls"])
                #expect(table.lines.first?.hasPrefix("ID") == true, "\(table)")
                #expect(table.lines.contains { $0.hasPrefix(id) && $0.contains("paused") && $0.hasSuffix("slow.bin") }, "\(table)")

                let resumed = try await cli.run(["resume", id, "--json"])
                #expect(resumed.status == 0, "\(resumed)")
                #expect(["waiting", "downloading"].contains(try resumed.jsonObject()["state"] as? String ?? ""), "\(resumed)")

                let cancelled = try await cli.run(["cancel", id])
                #expect(cancelled.stdout == "\(id)  cancelled\n", "\(cancelled)")
                // A cancel of a cancelled job is a no-op answered with the job.
                #expect(try await cli.run(["cancel", id]).status == 0)

                let removed = try await cli.run(["rm", id])
                #expect(removed.status == 0, "\(removed)")
                #expect(removed.stdout == "\(id)  removed\n")

                let gone = try await cli.run(["show", id])
                #expect(gone.status == 1, "\(gone)")
                #expect(gone.stderr.contains("[not_found, HTTP 404]"), "\(gone)")
                let pauseGone = try await cli.run(["pause", id])
                #expect(pauseGone.status == 1)
                #expect(pauseGone.stderr.contains("not_found"), "\(pauseGone)")
            }
        }

        @Test func anActionTheStateDoesNotAllowIsAConflict() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "small.bin", size: 50_000, seed: 7)
                let cli = FerryCLI(ferry: ferry)
                let added = try await cli.run(["add", origin.url("/small.bin"), "--wait"])
                #expect(added.status == 0, "\(added)")
                let id = try #require(added.lines.first)
                let result = try await cli.run(["pause", id])
                #expect(result.status == 1, "\(result)")
                #expect(result.stderr.contains("[conflict, HTTP 409]"), "\(result)")
            }
        }

        @Test func lsFollowsTheNextCursorThroughEveryPage() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let urls = (0..<23).map { origin.url("/page.bin?n=\($0)") }
                let added = try await cli.run(["add"] + urls + ["--paused"])
                #expect(added.status == 0, "\(added)")
                #expect(added.lines.count == 23)
                let listed = try await cli.run(["ls", "--json", "--page-size", "5"])
                #expect(listed.status == 0, "\(listed)")
                let jobs = try #require(try listed.jsonObject()["jobs"] as? [[String: Any]], "\(listed)")
                #expect(jobs.compactMap { $0["id"] as? String } == added.lines, "oldest first, every page, once")
                let table = try await cli.run(["ls", "--page-size", "5"])
                #expect(table.lines.count == 24, "a header and one row per job: \(table)")
                #expect(await urlCount(ferry) == 23)
            }
        }

        /// Jobs Ferry itself lists in one page.
        private func urlCount(_ ferry: InProcessFerry) async -> Int {
            guard let response = try? await FerryCLI(ferry: ferry).get("/api/v1/jobs?limit=1000"),
                  let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            else { return -1 }
            return (object["jobs"] as? [Any])?.count ?? -1
        }
    }
}
