import FerryCore
import CCurl
@testable import FerryEngine
import Foundation
import Testing

struct FailureClassifierTests {
    private func code(_ c: CURLcode) -> Int32 { Int32(c.rawValue) }

    private func verdict(_ cause: FailureCause) -> (kind: String, code: String, status: Int?) {
        switch FailureClassifier.classify(cause) {
        case .retry(let f, _): return ("retry", f.code.rawValue, f.httpStatus)
        case .waitForSpace(let f): return ("wait", f.code.rawValue, f.httpStatus)
        case .giveUp(let f): return ("giveUp", f.code.rawValue, f.httpStatus)
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func retryableStatuses(_ status: Int) {
        #expect(verdict(.httpStatus(status, retryAfter: nil)) == ("retry", "http_error", status))
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416, 451, 300, 304])
    func fatalStatuses(_ status: Int) {
        #expect(verdict(.httpStatus(status, retryAfter: nil)) == ("giveUp", "http_error", status))
    }

    @Test func retryAfterIsPassedOn() {
        #expect(FailureClassifier.classify(.httpStatus(503, retryAfter: 7)) == .retry(
            JobFailure(code: .httpError, message: "the origin answered 503", httpStatus: 503), retryAfter: 7))
    }

    @Test func networkFailuresAreRetried() {
        for c in [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_HTTP2_STREAM] {
            #expect(verdict(.curl(code: code(c), detail: "")) == ("retry", "network_error", nil))
        }
        #expect(verdict(.curl(code: code(CURLE_OPERATION_TIMEDOUT), detail: "")) == ("retry", "timeout", nil))
        #expect(verdict(.unusableResponse("x")) == ("retry", "network_error", nil))
    }

    @Test func anUnderstatedSizeIsRetriedAndNamesBothSizes() {
        #expect(FailureClassifier.classify(.sizeUnderstated(reported: 1_000, sent: 1_200, complete: true)) == .retry(
            JobFailure(code: .networkError, message: "the server said the file has 1000 bytes, but sent 1200: its size is wrong, so nothing received is kept"),
            retryAfter: nil))
        #expect(FailureClassifier.classify(.sizeUnderstated(reported: 1_000, sent: 1_200, complete: false)).failure.message
                == "the server said the file has 1000 bytes, but sent more (1200 so far): its size is wrong, so nothing received is kept")
    }

    @Test func fatalCurlCodes() {
        #expect(verdict(.curl(code: code(CURLE_TOO_MANY_REDIRECTS), detail: "")) == ("giveUp", "too_many_redirects", nil))
        #expect(verdict(.curl(code: code(CURLE_UNSUPPORTED_PROTOCOL), detail: "")) == ("giveUp", "unsupported_scheme", nil))
        #expect(verdict(.curl(code: code(CURLE_FILESIZE_EXCEEDED), detail: "")) == ("giveUp", "file_too_large", nil))
        #expect(verdict(.curl(code: code(CURLE_PEER_FAILED_VERIFICATION), detail: "")) == ("giveUp", "network_error", nil))
        #expect(verdict(.curl(code: code(CURLE_WRITE_ERROR), detail: "")) == ("giveUp", "internal", nil))
        // FTP and SFTP servers' firm answers.
        for c in [CURLE_REMOTE_FILE_NOT_FOUND, CURLE_REMOTE_ACCESS_DENIED, CURLE_LOGIN_DENIED, CURLE_USE_SSL_FAILED] {
            #expect(verdict(.curl(code: code(c), detail: "")) == ("giveUp", "network_error", nil))
        }
    }

    @Test func engineCauses() throws {
        #expect(verdict(.forbiddenDestination("10.0.0.1")) == ("giveUp", "forbidden_destination", nil))
        #expect(verdict(.hostKeyRejected("not in known_hosts")) == ("giveUp", "host_key_unknown", nil))
        #expect(verdict(.tooLarge("x")) == ("giveUp", "file_too_large", nil))
        #expect(verdict(.checksumMismatch(expected: try Checksum(algorithm: .md5, value: String(repeating: "a", count: 32)), actual: "b")) == ("giveUp", "checksum_mismatch", nil))
        #expect(verdict(.internalError("x")) == ("giveUp", "internal", nil))
    }

    @Test func diskErrors() {
        #expect(verdict(.write(SystemError("pwrite", "/f", errno: ENOSPC))) == ("wait", "disk_full", nil))
        #expect(verdict(.write(SystemError("pwrite", "/f", errno: EDQUOT))) == ("wait", "disk_full", nil))
        let eio = FailureClassifier.classify(.write(SystemError("pwrite", "/f", errno: EIO)))
        guard case .giveUp(let failure) = eio else { Issue.record("EIO must give up"); return }
        #expect(failure.code == .internalError)
        #expect(failure.message.contains("pwrite"))
        #expect(failure.message.contains("errno \(EIO)"))
    }

    @Test func messagesCarryTheCurlCode() {
        guard case .retry(let failure, _) = FailureClassifier.classify(.curl(code: code(CURLE_RECV_ERROR), detail: "Connection reset by peer")) else {
            Issue.record("expected retry")
            return
        }
        #expect(failure.message == "Connection reset by peer (curl 56)")
    }
}
