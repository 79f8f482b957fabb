import FerryCore
@testable import FerryClient
import Foundation
import Testing

/// `ferry add --deliver-to …`: the arguments, the `deliver` object sent, the `delivery` object and upload progress
/// read back, and how the client shows a delivery (plain lines, the two bars of `add --wait`, `ferry show`).
@Suite("Onward delivery in the client")
struct DeliveryTests {
    private func object(_ arguments: AddArguments) throws -> [String: Any] {
        let body = try arguments.submission().body
        return try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    // MARK: Arguments → request body

    @Test func deliverToAloneSendsOnlyTheURL() throws {
        let arguments = AddArguments(urls: ["https://example.com/a.iso"], deliverTo: "https://dav.example.org/in/a.iso")
        #expect(String(decoding: try arguments.submission().body, as: UTF8.self)
            == #"{"deliver":{"url":"https://dav.example.org/in/a.iso"},"url":"https://example.com/a.iso"}"#)
    }

    @Test func everyDeliveryOptionMapsToItsField() throws {
        let deliver = try #require(try object(AddArguments(
            urls: ["https://example.com/a.iso"], deliverTo: "https://up.example.org/upload", deliveryMethod: "post",
            deliveryField: "upload", formFields: ["folder=in/box", "note=a=b", "empty="],
            deliveryHeaders: ["Authorization: Bearer t", "X-Trace: 1"], deleteAfter: true))["deliver"] as? [String: Any])
        #expect(deliver["url"] as? String == "https://up.example.org/upload")
        #expect(deliver["method"] as? String == "POST")
        #expect(deliver["field"] as? String == "upload")
        #expect(deliver["fields"] as? [String: String] == ["folder": "in/box", "note": "a=b", "empty": ""])
        #expect(deliver["headers"] as? [String: String] == ["Authorization": "Bearer t", "X-Trace": "1"])
        #expect(deliver["deleteAfter"] as? Bool == true)
    }

    @Test func putIsSentWhenAskedForAndDefaultsAreLeftOut() throws {
        let deliver = try #require(try object(AddArguments(urls: ["http://a/1"], deliverTo: "http://t/1",
                                                           deliveryMethod: "Put"))["deliver"] as? [String: Any])
        #expect(deliver["method"] as? String == "PUT")
        #expect(deliver["deleteAfter"] == nil && deliver["fields"] == nil && deliver["headers"] == nil && deliver["field"] == nil)
        let plain = try object(AddArguments(urls: ["http://a/1"]))
        #expect(plain["deliver"] == nil)
    }

    @Test func aPostTargetTakesSeveralURLsAPutTargetOne() throws {
        let batch = try AddArguments(urls: ["http://a/1", "http://a/2"], deliverTo: "http://t/upload",
                                     deliveryMethod: "POST").submission()
        #expect(batch.items.map { $0.deliver?.url } == ["http://t/upload", "http://t/upload"])
        #expect(throws: ClientError.self) {
            try AddArguments(urls: ["http://a/1", "http://a/2"], deliverTo: "http://t/one.bin").submission()
        }
    }

    @Test func deliveryOptionsWithoutATargetAreUsageErrors() {
        let cases: [(AddArguments, String)] = [
            (AddArguments(urls: ["http://a/1"], deliveryMethod: "PUT"), "--method"),
            (AddArguments(urls: ["http://a/1"], deliveryField: "f"), "--field"),
            (AddArguments(urls: ["http://a/1"], formFields: ["a=b"]), "--form-field"),
            (AddArguments(urls: ["http://a/1"], deliveryHeaders: ["A: b"]), "--delivery-header"),
            (AddArguments(urls: ["http://a/1"], deleteAfter: true), "--delete-after"),
        ]
        for (arguments, option) in cases {
            do {
                _ = try arguments.submission()
                Issue.record("\(option) without --deliver-to was accepted")
            } catch {
                guard case .usage(let message) = error else { Issue.record("\(error)"); continue }
                #expect(message.hasPrefix(option) && message.contains("--deliver-to"), "\(message)")
            }
        }
    }

    @Test func badDeliveryOptionsAreUsageErrors() {
        let target = "http://t/x"
        let bad: [AddArguments] = [
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryMethod: "PATCH"),
            AddArguments(urls: ["http://a/1"], deliverTo: "  "),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryField: "file"),
            AddArguments(urls: ["http://a/1"], deliverTo: target, formFields: ["a=b"]),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryMethod: "POST", deliveryField: ""),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryMethod: "POST", formFields: ["novalue"]),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryMethod: "POST", formFields: ["=v"]),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryMethod: "POST", formFields: ["a=1", "a=2"]),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryHeaders: ["no colon"]),
            AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryHeaders: ["A: 1", "a: 2"]),
        ]
        for arguments in bad {
            #expect(throws: ClientError.self, "\(arguments)") { try arguments.submission() }
        }
        do {
            _ = try AddArguments(urls: ["http://a/1"], deliverTo: target, deliveryHeaders: ["oops"]).submission()
        } catch {
            #expect("\(error)".contains("--delivery-header"), "the message names the option: \(error)")
        }
    }

    // MARK: Reading jobs and events

    static let deliveringJSON = #"""
        {"id":"j1","url":"http://o/movie.mkv","state":"delivering","filename":"movie.mkv","bytesReceived":10485760,
         "bytesExpected":10485760,"progress":1,"speed":0,"eta":0,"error":null,
         "delivery":{"url":"https://***@dav.example.org:8443/in/movie.mkv","method":"PUT","state":"sending",
                     "bytesSent":2621440,"bytesTotal":10485760,"progress":0.25,"speed":3250000,"eta":2.4,
                     "attempts":1,"httpStatus":null,"error":null,"deliveredAt":null}}
        """#

    @Test func aJobDecodesItsDelivery() throws {
        let job = try JSONDecoder().decode(Job.self, from: Data(Self.deliveringJSON.utf8))
        #expect(job.state == .delivering)
        let delivery = try #require(job.delivery)
        #expect(delivery.url == "https://***@dav.example.org:8443/in/movie.mkv")
        #expect(delivery.host == "dav.example.org:8443")
        #expect(delivery.method == "PUT" && delivery.state == "sending")
        #expect(delivery.bytesSent == 2_621_440 && delivery.bytesTotal == 10_485_760)
        #expect(delivery.fraction == 0.25 && delivery.eta == 2.4 && delivery.attempts == 1)
        let plain = try JSONDecoder().decode(Job.self, from: Data(#"{"id":"a","state":"finished","delivery":null}"#.utf8))
        #expect(plain.delivery == nil)
    }

    @Test func deliveringProgressMovesTheUploadNotTheDownload() throws {
        var board = JobBoard(tracking: ["j1"])
        let job = try JSONDecoder().decode(Job.self, from: Data(Self.deliveringJSON.utf8))
        _ = board.apply(.job(job, restarted: false))
        let event = try JobEvent(ServerSentEvent(id: "9", event: "progress", data:
            #"{"id":"j1","phase":"delivering","bytesSent":5242880,"bytesTotal":10485760,"progress":0.5,"speed":3500000,"eta":1.5}"#))
        #expect(board.apply(event) == .progress("j1"))
        let after = try #require(board["j1"])
        #expect(after.bytesReceived == 10_485_760 && after.progress == 1, "the download's numbers stay")
        #expect(after.delivery?.bytesSent == 5_242_880 && after.delivery?.progress == 0.5 && after.delivery?.speed == 3_500_000)
        // A download's event (phase given, or none from an older server) moves the download.
        let download = try JobEvent(ServerSentEvent(id: "10", event: "progress", data:
            #"{"id":"j1","phase":"downloading","bytesReceived":5,"bytesExpected":10,"progress":0.5,"speed":1,"eta":5}"#))
        guard case .progress(let update) = download else { Issue.record("\(download)"); return }
        #expect(!update.isDelivery && update.bytesReceived == 5)
    }

    // MARK: Showing it

    static func job(_ state: JobState, delivery: Delivery, error: JobFailure? = nil) -> Job {
        var job = Job(id: "j1", url: "http://o/movie.mkv", state: state, filename: "movie.mkv", bytesReceived: 10_485_760,
                      bytesExpected: 10_485_760, progress: 1, error: error)
        job.delivery = delivery
        return job
    }

    static let sending = Delivery(url: "https://dav.example.org/in/movie.mkv", state: "sending", bytesSent: 2_621_440,
                                  bytesTotal: 10_485_760, progress: 0.25, speed: 3_250_000, eta: 2.4, attempts: 1)

    @Test func plainLinesShowTheUploadWhileDelivering() {
        #expect(JobCells(Self.job(.delivering, delivery: Self.sending)).plainLine
            == "j1  delivering  25%  sent 2.5 MiB/10.0 MiB  3.1 MiB/s  ETA 3s  movie.mkv  to dav.example.org")
        var delivered = Self.sending
        delivered.state = "delivered"
        delivered.bytesSent = 10_485_760
        delivered.progress = 1
        #expect(JobCells(Self.job(.finished, delivery: delivered)).plainLine
            == "j1  finished  100%  10.0 MiB  movie.mkv  delivered to dav.example.org")
        let failure = JobFailure(code: FailureCode(rawValue: "delivery_failed"), message: "the target answered 403", httpStatus: 403)
        var refused = Self.sending
        refused.state = "failed"
        refused.error = failure
        #expect(JobCells(Self.job(.failed, delivery: refused, error: failure)).plainLine
            == "j1  failed  100%  10.0 MiB  movie.mkv  to dav.example.org  delivery_failed: the target answered 403")
        let retrying = Self.job(.delivering, delivery: Self.sending,
                                error: JobFailure(code: .retrying, message: "the target answered 503; again at 12:00:05Z"))
        #expect(JobCells(retrying).state == "delivering (retrying)")
    }

    @Test func waitShowsTheDownloadBarThenTheUploadBar() {
        let lines = ProgressLines(width: 100, style: .ascii).render([Self.job(.delivering, delivery: Self.sending)])
        #expect(lines.count == 2, "\(lines)")
        #expect(lines[0].hasPrefix("movie.mkv ") && lines[0].contains("[######") && lines[0].contains("100%  10.0 MiB  downloaded"),
                "\(lines[0])")
        #expect(lines[1].hasPrefix("to dav.example.org ") && lines[1].contains("25%  sent 2.5 MiB/10.0 MiB  3.1 MiB/s  ETA 3s"),
                "\(lines[1])")
        #expect(lines.allSatisfy { TerminalText.width($0) <= 100 })
        let bars = lines.map { line in line.split(separator: "[").dropFirst().first.map { $0.prefix { $0 != "]" }.count } }
        #expect(bars[0] != nil && bars[0] == bars[1], "the two bars are as wide as each other: \(lines)")
        // Before the download ends the upload waits.
        var downloading = Self.job(.downloading, delivery: Delivery(url: "http://t:8080/x", bytesTotal: nil))
        downloading.bytesReceived = 5_242_880
        downloading.progress = 0.5
        downloading.speed = 1_000_000
        let early = ProgressLines(width: 100, style: .ascii).render([downloading])
        #expect(early[0].contains("50%  5.0 MiB/10.0 MiB  977 KiB/s  ETA --"), "\(early[0])")
        #expect(early[1].hasPrefix("to t:8080 ") && early[1].contains("pending"), "\(early[1])")
        // A job without a delivery keeps its one line.
        #expect(ProgressLines(width: 100, style: .ascii).render([DisplayTests.running()]).count == 1)
    }

    @Test func showListsTheDelivery() {
        let failure = JobFailure(code: FailureCode(rawValue: "delivery_failed"), message: "the target answered 403", httpStatus: 403)
        var refused = Self.sending
        refused.state = "failed"
        refused.httpStatus = 403
        refused.error = failure
        refused.attempts = 2
        let lines = JobDetails.lines(Self.job(.failed, delivery: refused, error: failure))
        let text = lines.joined(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("delivery:") && $0.hasSuffix("PUT https://dav.example.org/in/movie.mkv") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("delivery state:") && $0.hasSuffix(" failed") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("delivery attempts:") && $0.hasSuffix(" 2") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("delivery status:") && $0.hasSuffix(" HTTP 403") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("delivery error:") && $0.hasSuffix("delivery_failed: the target answered 403 (HTTP 403)") },
                "\(text)")
        #expect(!JobDetails.lines(DisplayTests.running()).contains { $0.hasPrefix("delivery") })
    }
}
