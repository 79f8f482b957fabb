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
            let parsed = try #require(ForwardedAction.parse(action.command("job-1", asker: "node a.example")))
            #expect(parsed.action == action)
            #expect(parsed.id == "job-1")
            #expect(parsed.asker == "node a.example")
        }
        #expect(ForwardedAction.patch(JobPatch(priority: 2)).command("j", asker: "n") == "patch j {\"priority\":2}\nn")
    }

    @Test func anythingElseIsNoCommand() {
        for line in ["", "pause", "pause ", "jump j", "pause j extra", "patch j", "patch j {}", "patch j [1]",
                     #"patch j {"priority":"high"}"#, #"patch j {"url":"not a url"}"#] {
            #expect(ForwardedAction.parse(line + "\nnode") == nil, "\(line)")
        }
        for command in ["pause j", "pause j\n", "pause j\nn\nm"] {
            #expect(ForwardedAction.parse(command) == nil, "no asking node: \(command)")
        }
    }

    @Test func aRefusalCarriesTheOwnersErrorBack() throws {
        let refusals = [
            ForwardedRefusal(id: "j", verb: "pause", error: .notApplicable("a finished job cannot be paused")),
            ForwardedRefusal(id: "j", verb: "delete", error: .notFound(id: "j")),
            ForwardedRefusal(id: "j", verb: "patch", error: .storeFailed("PostgreSQL error 08006")),
        ]
        for refusal in refusals {
            #expect(ForwardedRefusal.parse(refusal.command) == refusal)
            #expect(ForwardedAction.parse(refusal.command) == nil)
        }
        #expect(ForwardedRefusal(id: "j", verb: "resume", error: .notApplicable("two\nlines")).command == "refused j resume conflict two lines")
        #expect(ForwardedRefusal(id: "j", verb: "pause", error: .lostAnswer).command == "refused j pause failed job creation lost an answer")
        for command in ["refused", "refused j pause", "refused j pause maybe why", "pause j\nn"] {
            #expect(ForwardedRefusal.parse(command) == nil, "\(command)")
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
