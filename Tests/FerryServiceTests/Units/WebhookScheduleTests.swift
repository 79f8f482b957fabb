import Foundation
import Testing
@testable import FerryService

/// The retry schedule of webhook notices, against a fake clock.
@Suite("WebhookSchedule")
struct WebhookScheduleTests {
    let created = Date(timeIntervalSince1970: 1_800_000_000)
    let schedule = WebhookSchedule()

    @Test func delaysDoubleFromFiveSecondsToAnHour() {
        #expect((1...12).map { schedule.delay(afterAttempt: $0) }
            == [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600])
        #expect(schedule.delay(afterAttempt: 10_000) == 3600)  // no overflow
        #expect(WebhookSchedule(base: 0.25).delay(afterAttempt: 3) == 1)
    }

    @Test func twoHundredsDeliverAndFourTenIsGone() {
        for status in [200, 201, 204, 299] {
            #expect(schedule.verdict(.status(status), attempt: 1, createdAt: created, now: created) == .delivered)
        }
        #expect(schedule.verdict(.status(410), attempt: 7, createdAt: created, now: created) == .gone)
        #expect(schedule.verdict(.refused, attempt: 1, createdAt: created, now: created) == .failed)
    }

    @Test func otherAnswersAndNoAnswerAreRetriedFromTheTryTime() {
        for answer: WebhookSchedule.Answer in [.status(500), .status(404), .status(301), .status(429), .none] {
            let now = created.addingTimeInterval(3)
            #expect(schedule.verdict(answer, attempt: 1, createdAt: created, now: now) == .retry(at: now.addingTimeInterval(5)))
            #expect(schedule.verdict(answer, attempt: 4, createdAt: created, now: now) == .retry(at: now.addingTimeInterval(40)))
        }
    }

    /// Walks a receiver that always answers 500 with a fake clock: the tries follow the doubling schedule and the
    /// last one is the last whose retry time falls within 24 hours of the notice's creation.
    @Test func aNoticeIsGivenUpAfterTwentyFourHours() {
        var clock = created
        var attempt = 0
        var tries: [Date] = [clock]
        while true {
            attempt += 1
            guard case .retry(let at) = schedule.verdict(.status(500), attempt: attempt, createdAt: created, now: clock) else { break }
            #expect(at > clock)
            clock = at
            tries.append(clock)
        }
        let last = tries.last!.timeIntervalSince(created)
        #expect(last <= 86_400)
        #expect(last + 3600 > 86_400)  // one more hour would have passed the limit
        #expect(attempt == tries.count)
        // 5+10+...+2560 = 5115 s over the first 10 retries, then hourly: 10 + 22 retries, 33 tries in all.
        #expect(tries.count == 33)
        #expect(schedule.verdict(.status(200), attempt: attempt + 1, createdAt: created, now: clock) == .delivered)
    }
}
