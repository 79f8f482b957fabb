import CCurl
import FerryCore
@testable import FerryEngine
import Testing

/// Upload failures go through the download rules once, and give up as `delivery_failed` (API.md: 408, 429
/// with `Retry-After`, 5xx and network errors are retried; other statuses fail at once).
struct DeliveryClassifierTests {
    @Test(arguments: [408, 429, 500, 503])
    func retryableStatusesWaitWithTheTargetsStatus(_ status: Int) {
        guard case .retry(let failure, let retryAfter) = FailureClassifier.classifyDelivery(.httpStatus(status, retryAfter: 9)) else {
            Issue.record("\(status) was not retried")
            return
        }
        #expect(failure.code == .deliveryFailed && failure.httpStatus == status && retryAfter == 9)
    }

    @Test(arguments: [400, 401, 403, 404, 405, 413, 301])
    func otherStatusesFailAtOnce(_ status: Int) {
        #expect(FailureClassifier.classifyDelivery(.httpStatus(status, retryAfter: nil)) == .giveUp(
            JobFailure(code: .deliveryFailed, message: "the delivery target answered \(status)", httpStatus: status)))
    }

    @Test func networkErrorsAreRetriedAndARefusedTargetIsAForbiddenDestination() {
        guard case .retry(let failure, _) = FailureClassifier.classifyDelivery(.curl(code: Int32(CURLE_COULDNT_CONNECT.rawValue), detail: "refused")) else {
            Issue.record("a connection failure was not retried")
            return
        }
        #expect(failure.code == .deliveryFailed && failure.message.contains("refused"))
        #expect(FailureClassifier.classifyDelivery(.forbiddenDestination("10.0.0.1 is private"))
            == .giveUp(JobFailure(code: .forbiddenDestination, message: "10.0.0.1 is private")))
    }
}
