import FerryTestSupport
import Foundation
import Testing
@testable import FerryService

/// Walks EVERY route the router has with a second key and fails on any that leaks the first key's job (API.md, "API
/// keys": another key's job answers `404` as if absent). The routes come from the router itself, so a route added
/// later is walked too; one that skips `JobAccess` fails here: it answers something else than `404` for the job's id,
/// shows the id, or changes the job.
@Suite("API keys: no route leaks another key's job")
struct KeyScopeWalkTests {
    @Test func everyRouteHidesAnotherKeysJob() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/walk.bin", size: 40_000, seed: 9)
            try await withFerry(token: KeyTests.adminToken) { ferry in
                let (_, alice) = try await KeyTests.makeKey(ferry, name: "alice")
                let (_, bob) = try await KeyTests.makeKey(ferry, name: "bob")
                let made = try await alice.json("POST", "/api/v1/jobs", ["url": nginx.url("/walk.bin"), "tags": ["walk"],
                                                                         "notify": nginx.url("/refuse-upload/walk")],
                                                headers: ["Idempotency-Key": "walk"])
                #expect(made.status == 201)
                let job = try #require(try made.json()["id"] as? String)
                let finished = try await alice.waitForJob(job) { $0["state"] as? String == "finished" }
                let filename = try #require(finished["filename"] as? String)
                // Its webhook notice (refused by the receiver: it stays pending).
                var notice: String?
                for _ in 0..<100 where notice == nil {
                    let list = try await ferry.client.get("/api/v1/notices?job=\(job)").json()["notices"] as? [[String: Any]]
                    notice = list?.first?["id"] as? String
                    if notice == nil { try await Task.sleep(for: .milliseconds(100)) }
                }
                let noticeID = try #require(notice)

                let routes = ferry.service.registeredRoutes
                #expect(routes.count >= 20)
                for route in routes {
                    try await walk(route, job: job, notice: noticeID, filename: filename, url: nginx.url("/walk.bin"),
                                   as: bob, admin: ferry.client)
                }
                // Nothing bob did changed alice's job.
                let after = try await alice.get("/api/v1/jobs/\(job)").json()
                #expect(after["state"] as? String == "finished")
                #expect(after["priority"] as? Int == 0)
            }
        }
    }

    /// Sends `bob` at one route in every way worth trying and checks none shows or touches `job`.
    private func walk(_ route: (method: String, pattern: String), job: String, notice: String, filename: String,
                      url: String, as bob: TestClient, admin: TestClient) async throws {
        // Each parameter is the id of alice's job, or of its notice on the notices' routes.
        let isNotice = route.pattern.hasPrefix("/api/v1/notices/")
        let path = "/" + route.pattern.split(separator: "/")
            .map { $0.hasPrefix(":") || $0.hasPrefix("*") ? Substring(isNotice ? notice : job) : $0 }
            .joined(separator: "/")
        let names = "\(route.method) \(route.pattern)"
        if route.pattern.hasSuffix("/events") {
            try await walkStream(route.pattern.contains(":") ? path : path + "?jobs=\(job)", job: job, names: names,
                                 as: bob, admin: admin)
            if !route.pattern.contains(":") { try await walkStream(path, job: job, names: names, as: bob, admin: admin) }
            return
        }
        var requests: [(query: String, body: Any?, headers: [String: String])] = [("", nil, [:])]
        if route.method != "GET" && route.method != "DELETE" {
            requests = [("", [String: Any](), [:])]
        }
        switch (route.method, route.pattern) {
        case ("GET", "/api/v1/jobs"):
            requests += [("?state=finished", nil, [:]), ("?tag=walk", nil, [:]),
                         ("?q=\(filename.prefix(4))", nil, [:]), ("?limit=1000", nil, [:])]
        case ("POST", "/api/v1/jobs"):
            // The same URL (dedupe) and the same Idempotency-Key as alice's: bob gets a job of his own.
            requests += [("", ["url": url], [:]), ("", ["url": url, "paused": true], ["Idempotency-Key": "walk"])]
        case ("DELETE", "/api/v1/jobs"):
            requests = [("?olderThan=0s", nil, [:]), ("?olderThan=0s&state=finished", nil, [:])]
        case ("PATCH", _) where route.pattern.contains(":"):
            requests += [("", ["priority": 7], [:]), ("", ["tags": ["x"]], [:])]
        case ("GET", "/api/v1/notices"):
            requests += [("?job=\(job)", nil, [:]), ("?state=pending", nil, [:])]
        case ("GET", _) where route.pattern.hasSuffix("/content"):
            requests += [("?follow=true", nil, [:]), ("", nil, ["Range": "bytes=0-9"])]
        default:
            break
        }
        for request in requests {
            let target = path + request.query
            let response = if let body = request.body {
                try await bob.json(route.method, target, body, headers: request.headers)
            } else {
                try await bob.request(route.method, target, headers: request.headers, timeout: 5)
            }
            // A 404 names the id it was asked for, as for an id that never existed: not a leak.
            let text = String(decoding: response.body, as: UTF8.self).replacingOccurrences(of: "no job with id '\(job)'", with: "")
                .replacingOccurrences(of: "no notice with id '\(notice)'", with: "")
            #expect(!text.contains(job), "\(names) \(request.query) shows the other key's job: \(text.prefix(300))")
            #expect(!text.contains(notice), "\(names) \(request.query) shows the other key's notice: \(text.prefix(300))")
            if route.pattern.contains(":") && (route.pattern.hasPrefix("/api/v1/jobs/") || isNotice) {
                #expect(response.status == 404, "\(names) answered \(response.status) for another key's job: \(text.prefix(200))")
            }
            if let replayed = response.header("Idempotent-Replayed") {
                #expect(replayed != "true", "\(names) replayed another key's Idempotency-Key")
            }
        }
        // Whatever bob sent, alice's job is as it was.
        #expect(try await admin.get("/api/v1/jobs/\(job)").status == 200, "\(names) removed another key's job")
    }

    /// An event stream opened by bob must not carry `job`, even while the job changes (the administrator changes its
    /// tags, which publishes `job` events).
    private func walkStream(_ path: String, job: String, names: String, as bob: TestClient, admin: TestClient) async throws {
        let reader = try await bob.events(path)
        guard reader.status == 200 else {
            #expect(reader.status == 404 || !path.contains("/jobs/"), "\(names) answered \(reader.status)")
            return
        }
        for tags in [["walk", "changed"], ["walk"]] {
            let changed = try await admin.json("PATCH", "/api/v1/jobs/\(job)", ["tags": tags])
            #expect(changed.status == 200, "\(String(decoding: changed.body, as: UTF8.self))")
        }
        let (events, _) = await KeyTests.drain(reader, for: 1)
        #expect(!events.contains { $0.data.contains(job) }, "\(names) streamed another key's job")
    }
}
