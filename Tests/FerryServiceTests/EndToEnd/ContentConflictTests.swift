import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
@testable import FerryService

/// `GET /api/v1/jobs/{id}/content` of a job that has no finished file: the 409's message fits the
/// job's state, and suggests `?follow=true` only where following can deliver the file.
@Suite("Content of unfinished jobs, end to end", .serialized)
struct ContentConflictTests {
    private func conflict(_ ferry: RunningFerry, _ path: String) async throws -> String {
        let response = try await ferry.client.get(path)
        #expect(response.status == 409)
        let error = try #require(try response.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "conflict")
        return try #require(error["message"] as? String)
    }

    @Test func pausedJobIsToldToFollowAndCancelledJobIsNot() async throws {
        try await withFerry { ferry in
            let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/never.bin", "paused": true])
            let id = try #require(try created.json()["id"] as? String)

            let paused = try await conflict(ferry, "/api/v1/jobs/\(id)/content")
            #expect(paused.contains("paused"), "\(paused)")
            #expect(paused.contains("?follow=true"), "a paused job can be followed: \(paused)")

            #expect(try await ferry.client.request("POST", "/api/v1/jobs/\(id)/cancel").status == 200)
            for path in ["/api/v1/jobs/\(id)/content", "/api/v1/jobs/\(id)/content?follow=true"] {
                let cancelled = try await conflict(ferry, path)
                #expect(cancelled.contains("cancelled"), "\(path): \(cancelled)")
                #expect(cancelled.contains("no file"), "\(path): \(cancelled)")
                #expect(!cancelled.contains("follow"), "following a cancelled job cannot help: \(path): \(cancelled)")
            }
        }
    }

    @Test func failedJobSaysItFailedAndCanBeResumed() async throws {
        try await withNginx { nginx in
            try await withFerry { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/missing.bin")])
                let id = try #require(try created.json()["id"] as? String)
                try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                for path in ["/api/v1/jobs/\(id)/content", "/api/v1/jobs/\(id)/content?follow=true"] {
                    let failed = try await conflict(ferry, path)
                    #expect(failed.contains("failed"), "\(path): \(failed)")
                    #expect(failed.contains("404"), "the reason is given: \(path): \(failed)")
                    #expect(failed.contains("resume"), "\(path): \(failed)")
                    #expect(!failed.contains("follow"), "following a failed job cannot help: \(path): \(failed)")
                }
            }
        }
    }
}

/// The same sentences, state by state, without a server.
@Suite("Content conflict messages")
struct ContentConflictMessageTests {
    private func message(_ state: JobState, error: JobFailure? = nil) -> String {
        ContentController.notFinishedMessage(
            JobRecord(id: "j1", url: "https://o.example/a", state: state, error: error, dedupeKey: "k", createdAt: Date()))
    }

    @Test func followIsSuggestedOnlyWhileTheJobCanStillFinish() {
        for state in [JobState.waiting, .downloading, .paused] {
            #expect(message(state).contains("?follow=true"), "\(state)")
            #expect(message(state).contains(state.rawValue), "\(state)")
        }
        for state in [JobState.failed, .cancelled] {
            #expect(!message(state).contains("follow"), "\(state)")
        }
    }

    @Test func failedNamesTheReasonAndTheResume() {
        let text = message(.failed, error: JobFailure(code: .httpError, message: "the origin answered 404 Not Found", httpStatus: 404))
        #expect(text.contains("failed") && text.contains("404 Not Found") && text.contains("[http_error]"))
        #expect(!text.contains("(HTTP 404)"), "the status is not repeated when the message names it: \(text)")
        #expect(text.contains("/api/v1/jobs/j1/resume"))
        let other = message(.failed, error: JobFailure(code: .httpError, message: "origin refused", httpStatus: 403))
        #expect(other.contains("(HTTP 403)"))
        #expect(message(.cancelled).contains("was cancelled and has no file"))
    }
}
