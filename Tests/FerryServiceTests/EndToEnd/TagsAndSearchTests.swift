import FerryTestSupport
import Foundation
import Testing

/// Job tags and the `tag` and `q` filters of `GET /api/v1/jobs`, through the HTTP API of a running Ferry (SQLite
/// store in its spool). Jobs are created paused, so nothing is fetched.
@Suite("Tags and search, end to end")
struct TagsAndSearchTests {
    @Test func tagsAreShownAsGivenInEveryView() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            let events = try await client.events("/api/v1/events")
            let created = try await client.json("POST", "/api/v1/jobs",
                                                ["url": "http://127.0.0.1:9/t.bin", "paused": true, "tags": ["b", "Ä ✓", "b"]])
            #expect(created.status == 201)
            let id = try #require(try created.json()["id"] as? String)
            #expect(try created.json()["tags"] as? [String] == ["b", "Ä ✓", "b"])
            #expect(try await client.get("/api/v1/jobs/\(id)").json()["tags"] as? [String] == ["b", "Ä ✓", "b"])
            let listed = try await client.get("/api/v1/jobs").json()["jobs"] as? [[String: Any]]
            #expect(listed?.first?["tags"] as? [String] == ["b", "Ä ✓", "b"])
            let seen = try await events.collect { $0.event == "job" }
            #expect(try seen.last?.json()["tags"] as? [String] == ["b", "Ä ✓", "b"])

            // None given (or null): [].
            let plain = try await client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/p.bin", "paused": true])
            #expect(try plain.json()["tags"] as? [String] == [])
            let null = try await client.request("POST", "/api/v1/jobs",
                                                body: Array(#"{"url":"http://127.0.0.1:9/n.bin","paused":true,"tags":null}"#.utf8))
            #expect(try null.json()["tags"] as? [String] == [])
        }
    }

    @Test(arguments: [
        ("[" + (1...17).map { "\"t\($0)\"" }.joined(separator: ",") + "]", "at most 16"),
        ("[\"" + String(repeating: "x", count: 65) + "\"]", "1 to 64"),
        ("[\"\"]", "1 to 64"),
        ("[\"ok\",7]", "'tags[1]' must be a string"),
        ("\"one\"", "'tags' must be an array"),
        ("[\"a\\nb\"]", "control characters"),
    ])
    func badTagsAreRefusedWithAClearMessage(tags: String, message: String) async throws {
        try await withFerry { ferry in
            let body = #"{"url":"http://e.org/a","tags":"# + tags + "}"
            let response = try await ferry.client.request("POST", "/api/v1/jobs", body: Array(body.utf8))
            #expect(response.status == 400)
            let error = try #require(try response.json()["error"] as? [String: Any])
            #expect(error["code"] as? String == "invalid_request")
            #expect((error["message"] as? String)?.contains(message) == true, "\(error)")
            #expect((try await ferry.client.get("/api/v1/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func exactlySixteenTagsOfSixtyFourCharactersAreAccepted() async throws {
        try await withFerry { ferry in
            let tags = (0..<16).map { String(repeating: "\($0 % 10)", count: 63) + "é" }
            let created = try await ferry.client.json("POST", "/api/v1/jobs",
                                                      ["url": "http://127.0.0.1:9/max", "paused": true, "tags": tags])
            #expect(created.status == 201)
            #expect(try created.json()["tags"] as? [String] == tags)
        }
    }

    @Test func aBatchRefusesOnlyTheItemWithBadTags() async throws {
        try await withFerry { ferry in
            let response = try await ferry.client.json("POST", "/api/v1/jobs", [
                ["url": "http://127.0.0.1:9/good", "paused": true, "tags": ["batch"]],
                ["url": "http://127.0.0.1:9/bad", "paused": true, "tags": (0...16).map { "t\($0)" }],
            ])
            #expect(response.status == 200)
            let items = try response.jsonArray()
            #expect(items.count == 2)
            #expect(items[0]["tags"] as? [String] == ["batch"])
            #expect((items[1]["error"] as? [String: Any])?["code"] as? String == "invalid_request")
        }
    }

    @Test func listFiltersByTagAndTextWithStatesAndCursors() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            // Ten jobs: even ones tagged "even", every job "all"; filenames Report-<i>.PDF for i < 5.
            var ids: [String] = []
            for i in 0..<10 {
                var body: [String: Any] = ["url": "http://127.0.0.1:9/file-\(i).bin", "paused": true,
                                           "tags": i % 2 == 0 ? ["even", "all"] : ["all"]]
                if i < 5 { body["filename"] = "Report-\(i).PDF" }
                let created = try await client.json("POST", "/api/v1/jobs", body)
                ids.append(try #require(try created.json()["id"] as? String))
            }
            let secret = try await client.json("POST", "/api/v1/jobs",
                                               ["url": "http://bob:hunter2@127.0.0.1:9/vault.tar", "paused": true])
            let secretID = try #require(try secret.json()["id"] as? String)
            _ = try await client.request("POST", "/api/v1/jobs/\(ids[2])/cancel")

            func listed(_ query: String) async throws -> [String] {
                let response = try await client.get("/api/v1/jobs?" + query)
                #expect(response.status == 200, "\(query): \(response.text)")
                #expect(response.header("Ferry-Event-Id") != nil)
                return (try response.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            }
            #expect(try await listed("tag=even") == [0, 2, 4, 6, 8].map { ids[$0] })
            #expect(try await listed("tag=EVEN").isEmpty)  // exact
            #expect(try await listed("tag=even&state=paused") == [0, 4, 6, 8].map { ids[$0] })
            #expect(try await listed("tag=even&state=cancelled") == [ids[2]])
            #expect(try await listed("q=report-") == (0..<5).map { ids[$0] })  // the filename, any case
            #expect(try await listed("q=FILE-7") == [ids[7]])  // the URL
            #expect(try await listed("q=report&tag=even&state=paused") == [ids[0], ids[4]])
            #expect(try await listed("q=Report-1.pdf") == [ids[1]])
            #expect(try await listed("q=report%201") .isEmpty)
            #expect(try await listed("q=hunter2").isEmpty)  // the password is not searchable
            #expect(try await listed("q=bob").isEmpty)
            #expect(try await listed("q=" + "***@".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!) == [secretID])
            #expect(try await listed("q=&tag=").count == 11)  // empty filters filter nothing

            // Cursors walk the filtered list: 2 per page, each match once.
            var walked: [String] = []
            var sizes: [Int] = []
            var query = "tag=all&state=paused&limit=2"
            while true {
                let page = try await client.get("/api/v1/jobs?" + query).json()
                let jobs = (page["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
                walked += jobs
                sizes.append(jobs.count)
                guard let next = page["next"] as? String else { break }
                query = "tag=all&state=paused&limit=2&after=\(next)"
                if sizes.count > 20 { Issue.record("the walk does not end"); break }
            }
            #expect(walked == ids.enumerated().filter { $0.offset != 2 }.map(\.element))
            #expect(sizes == [2, 2, 2, 2, 1])

            let tooLong = try await client.get("/api/v1/jobs?q=" + String(repeating: "a", count: 2049))
            #expect(tooLong.status == 400)
            #expect((try tooLong.json()["error"] as? [String: Any])?["code"] as? String == "invalid_request")
            let badCursor = try await client.get("/api/v1/jobs?tag=all&after=nope")
            #expect(badCursor.status == 400)
        }
    }

    @Test func patchReplacesTagsInAnyStateAndTheyLastAcrossARestart() async throws {
        let spool = try Fixture.tempDirectory("ferry-tags")
        defer { Fixture.removeTree(spool) }
        let ferry = try await RunningFerry.start(spool: spool)
        let client = ferry.client
        let created = try await client.json("POST", "/api/v1/jobs",
                                            ["url": "http://127.0.0.1:9/patched", "paused": true, "tags": ["old"]])
        let id = try #require(try created.json()["id"] as? String)
        _ = try await client.request("POST", "/api/v1/jobs/\(id)/cancel")

        // A cancelled job's settings cannot change, its tags can.
        let priority = try await client.json("PATCH", "/api/v1/jobs/\(id)", ["priority": 3])
        #expect(priority.status == 409)
        let patched = try await client.json("PATCH", "/api/v1/jobs/\(id)", ["tags": ["new", "kept"]])
        #expect(patched.status == 200)
        #expect(try patched.json()["tags"] as? [String] == ["new", "kept"])
        let refused = try await client.json("PATCH", "/api/v1/jobs/\(id)", ["tags": (0...16).map { "t\($0)" }])
        #expect(refused.status == 400)
        #expect((try refused.json()["error"] as? [String: Any])?["code"] as? String == "invalid_request")
        let wrongType = try await client.json("PATCH", "/api/v1/jobs/\(id)", ["tags": [1]])
        #expect(wrongType.status == 400)
        let oldIDs = (try await client.get("/api/v1/jobs?tag=old").json()["jobs"] as? [Any])?.count
        let newIDs = (try await client.get("/api/v1/jobs?tag=new").json()["jobs"] as? [[String: Any]])?.map { $0["id"] as? String }
        await ferry.stop()
        #expect(oldIDs == 0)
        #expect(newIDs == [id])

        let again = try await RunningFerry.start(spool: spool)
        let job = try await again.client.get("/api/v1/jobs/\(id)").json()
        let found = (try await again.client.get("/api/v1/jobs?tag=kept").json()["jobs"] as? [[String: Any]])?.map { $0["id"] as? String }
        let cleared = try await again.client.json("PATCH", "/api/v1/jobs/\(id)", ["tags": [String]()])
        let afterClear = (try await again.client.get("/api/v1/jobs?tag=kept").json()["jobs"] as? [Any])?.count
        await again.stop()
        #expect(job["tags"] as? [String] == ["new", "kept"])
        #expect(found == [id])
        #expect(try cleared.json()["tags"] as? [String] == [])
        #expect(afterClear == 0)
    }
}
