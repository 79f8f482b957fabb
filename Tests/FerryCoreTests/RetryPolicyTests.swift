import Testing
@testable import FerryCore

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 60)

    @Test func defaults() {
        let standard = RetryPolicy()
        #expect(standard.maxAttempts == 5)
        #expect(standard.baseDelay == 1)
        #expect(standard.maxDelay == 60)
        #expect(standard == policy)
    }

    @Test func doublesWithEachAttempt() {
        // jitter 1 gives the full exponential value.
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, jitter: 1) == 1)
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, jitter: 1) == 2)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: 1) == 4)
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, jitter: 1) == 8)
        #expect(policy.delay(afterAttempt: 6, retryAfter: nil, jitter: 1) == 32)
        let slow = RetryPolicy(maxAttempts: 3, baseDelay: 2.5, maxDelay: 1000)
        #expect(slow.delay(afterAttempt: 3, retryAfter: nil, jitter: 1) == 10)
    }

    @Test func capsAtMaxDelay() {
        #expect(policy.delay(afterAttempt: 7, retryAfter: nil, jitter: 1) == 60)   // 64 capped
        #expect(policy.delay(afterAttempt: 100, retryAfter: nil, jitter: 1) == 60)
        #expect(policy.delay(afterAttempt: Int.max, retryAfter: nil, jitter: 1) == 60)
        #expect(policy.delay(afterAttempt: 1100, retryAfter: nil, jitter: 0) == 30)
    }

    @Test func jitterStaysBetweenHalfAndFull() {
        for attempt in 1...10 {
            let full = policy.delay(afterAttempt: attempt, retryAfter: nil, jitter: 1)
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, jitter: 0) == full / 2)
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, jitter: 0.5) == full * 0.75)
            var generator = SeededGenerator(seed: UInt64(attempt))
            for _ in 0..<200 {
                let delay = policy.delay(afterAttempt: attempt, retryAfter: nil, jitter: Double.random(in: 0...1, using: &generator))
                #expect(delay >= full / 2 && delay <= full)
            }
        }
    }

    @Test func jitterOutsideRangeIsClamped() {
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: -5) == 2)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: 7) == 4)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: .nan) == 3)
    }

    @Test func attemptBelowOneCountsAsOne() {
        #expect(policy.delay(afterAttempt: 0, retryAfter: nil, jitter: 1) == 1)
        #expect(policy.delay(afterAttempt: -3, retryAfter: nil, jitter: 1) == 1)
    }

    @Test func retryAfterDominatesWhenLonger() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: 120, jitter: 1) == 120)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 120, jitter: 0) == 120)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 0.2, jitter: 1) == 1)      // shorter: back-off wins
        #expect(policy.delay(afterAttempt: 3, retryAfter: 0, jitter: 0) == 2)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 86_400, jitter: 1) == 3600) // capped at one hour
        #expect(policy.delay(afterAttempt: 1, retryAfter: 3600, jitter: 1) == 3600)
    }

    @Test func invalidRetryAfterIsIgnored() {
        #expect(policy.delay(afterAttempt: 2, retryAfter: -10, jitter: 1) == 2)
        #expect(policy.delay(afterAttempt: 2, retryAfter: .nan, jitter: 1) == 2)
        #expect(policy.delay(afterAttempt: 2, retryAfter: .infinity, jitter: 1) == 2)
    }

    @Test func largeMaxDelayIsNotCappedWithoutRetryAfter() {
        let patient = RetryPolicy(maxAttempts: 20, baseDelay: 1, maxDelay: 10_000)
        #expect(patient.delay(afterAttempt: 14, retryAfter: nil, jitter: 1) == 8192)
        // With Retry-After the result is capped at one hour.
        #expect(patient.delay(afterAttempt: 14, retryAfter: 1, jitter: 1) == 3600)
    }

    @Test(arguments: [(0, true), (1, true), (4, true), (5, false), (6, false), (100, false)])
    func shouldRetry(attempt: Int, expected: Bool) {
        #expect(policy.shouldRetry(afterAttempt: attempt) == expected)
    }

    @Test func singleAttemptNeverRetries() {
        let once = RetryPolicy(maxAttempts: 1)
        #expect(!once.shouldRetry(afterAttempt: 1))
        #expect(RetryPolicy(maxAttempts: 0).shouldRetry(afterAttempt: 1) == false)
    }
}
