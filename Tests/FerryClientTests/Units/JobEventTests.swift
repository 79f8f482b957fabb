@testable import FerryClient
import Foundation
import Testing

@Suite("Job events")
struct JobEventTests {
    static func jobJSON(_ id: String, _ state: String, received: Int = 0, expected: String = "null",
                        extra: String = "") -> String {
        """
        {"id":"\(id)","url":"http://o/\(id).bin","finalUrl":null,"state":"\(state)","filename":"\(id).bin",\
        "bytesReceived":\(received),"bytesExpected":\(expected),"progress":null,"speed":0,"eta":null,\
        "contentType":null,"sha256":null,"expectedSha256":null,"error":null,"attempts":0,"priority":0,\
        "createdAt":"2026-01-01T00:00:00Z","startedAt":null,"finishedAt":null,"contentUrl":"/api/v1/jobs/\(id)/content"\(extra)}
        """
    }

    @Test func jobEventsDecodeWholeJobs() throws {
        let event = try JobEvent(ServerSentEvent(id: "5", event: "job", data: Self.jobJSON("a", "waiting")))
        guard case .job(let job, let restarted) = event else { Issue.record("not a job event"); return }
        #expect(job.id == "a")
        #expect(job.state == .waiting)
        #expect(job.filename == "a.bin")
        #expect(job.bytesExpected == nil)
        #expect(!restarted)
        #expect(event.jobID == "a")
    }

    @Test func aRestartIsFlagged() throws {
        let data = Self.jobJSON("a", "downloading", extra: #","restarted":true"#)
        #expect(try JobEvent(ServerSentEvent(event: "job", data: data)) == .job(try decodeJob(data), restarted: true))
    }

    @Test func progressRemovedResetAndUnknownEvents() throws {
        let progress = try JobEvent(ServerSentEvent(event: "progress", data:
            #"{"id":"a","bytesReceived":10,"bytesExpected":40,"progress":0.25,"speed":2.5,"eta":12}"#))
        #expect(progress == .progress(ProgressUpdate(id: "a", bytesReceived: 10, bytesExpected: 40, progress: 0.25,
                                                     speed: 2.5, eta: 12)))
        #expect(try JobEvent(ServerSentEvent(event: "removed", data: #"{"id":"a"}"#)) == .removed(id: "a"))
        #expect(try JobEvent(ServerSentEvent(event: "reset", data: "{}")) == .reset)
        #expect(try JobEvent(ServerSentEvent(event: "future", data: "{}")) == .other("future"))
    }

    @Test func malformedDataIsAnError() {
        #expect(throws: ClientError.self) { try JobEvent(ServerSentEvent(event: "job", data: "{")) }
        #expect(throws: ClientError.self) { try JobEvent(ServerSentEvent(event: "progress", data: #"{"id":1}"#)) }
    }

    @Test func tagsDecodeAsGivenAndDefaultToNone() throws {
        #expect(try decodeJob(Self.jobJSON("a", "paused", extra: #","tags":["x","Y z","x"]"#)).tags == ["x", "Y z", "x"])
        #expect(try decodeJob(Self.jobJSON("a", "paused", extra: #","tags":[]"#)).tags == [])
        #expect(try decodeJob(Self.jobJSON("a", "paused")).tags == [])  // an older server sends none
        let tagged = try decodeJob(Self.jobJSON("a", "paused", extra: #","tags":["tv","Sci Fi"]"#))
        #expect(JobDetails.lines(tagged).contains("tags:     tv, Sci Fi"), "\(JobDetails.lines(tagged))")
        #expect(!JobDetails.lines(try decodeJob(Self.jobJSON("a", "paused"))).contains { $0.hasPrefix("tags") })
    }

    @Test func unknownStatesAreKept() throws {
        let job = try decodeJob(Self.jobJSON("a", "hibernating"))
        #expect(job.state == .other("hibernating"))
        #expect(job.state.description == "hibernating")
        #expect(!job.state.endsWait)
    }
}

func decodeJob(_ json: String) throws -> Job {
    try JSONDecoder().decode(Job.self, from: Data(json.utf8))
}
