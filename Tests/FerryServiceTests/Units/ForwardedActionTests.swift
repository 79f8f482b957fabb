import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// Commands one node sends another for a job it runs: the verb, the job and a PATCH's fields.
@Suite("Forwarded actions")
struct ForwardedActionTests {
    @Test func everyActionSurvivesItsCommand() throws {
        var patch = JobPatch(priority: -3, maxBytesPerSecond: .some(nil), tags: ["x", "é \"y\""])
        patch.url = try SubmittedURL.parse("https://user:pw@Example.org:443/a b?q=1", schemes: SubmittedURL.downloadSchemes)
        let actions: [ForwardedAction] = [.pause, .resume, .cancel, .delete, .patch(patch), .patch(JobPatch(maxBytesPerSecond: 5))]
        for action in actions {
            let parsed = try #require(ForwardedAction.parse(action.command("job-1")))
            #expect(parsed.0 == action)
            #expect(parsed.1 == "job-1")
        }
        #expect(ForwardedAction.patch(JobPatch(priority: 2)).command("j") == #"patch j {"priority":2}"#)
    }

    @Test func anythingElseIsNoCommand() {
        for command in ["", "pause", "pause ", "jump j", "pause j extra", "patch j", "patch j {}", "patch j [1]",
                        #"patch j {"priority":"high"}"#, #"patch j {"url":"not a url"}"#] {
            #expect(ForwardedAction.parse(command) == nil, "\(command)")
        }
    }

    @Test func aPatchIsVisibleOnceTheRowShowsItsValuesOrTheJobStopped() {
        let patch = ForwardedAction.patch(JobPatch(priority: 4, maxBytesPerSecond: .some(nil)))
        var job = JobRecord(id: "j", url: "http://example.org/a", state: .downloading, dedupeKey: "k", createdAt: Date())
        #expect(!patch.isVisible(in: job))
        job.priority = 4
        job.maxBytesPerSecond = 100
        #expect(!patch.isVisible(in: job))
        job.maxBytesPerSecond = nil
        #expect(patch.isVisible(in: job))
        job.priority = 0
        job.state = .paused
        #expect(patch.isVisible(in: job), "stopped there: the asking node applies it itself")
    }
}
