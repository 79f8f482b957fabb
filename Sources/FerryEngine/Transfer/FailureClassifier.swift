import FerryCore
import CCurl

/// Classifies every transfer failure once: retry or give up, with a stable code. Pure.
enum FailureClassifier {
    static func classify(_ cause: FailureCause) -> FailureVerdict {
        switch cause {
        case .httpStatus(let status, let retryAfter):
            let failure = JobFailure(code: .httpError, message: "the origin answered \(status)", httpStatus: status)
            if status == 408 || status == 429 || (500..<600).contains(status) { return .retry(failure, retryAfter: retryAfter) }
            return .giveUp(failure)
        case .forbiddenDestination(let detail):
            return .giveUp(JobFailure(code: .forbiddenDestination, message: detail))
        case .hostKeyRejected(let detail):
            return .giveUp(JobFailure(code: .hostKeyUnknown, message: detail))
        case .write(let error):
            if error.isNoSpace { return .waitForSpace(JobFailure(code: .diskFull, message: "no space left for the file: \(error)")) }
            return .giveUp(JobFailure(code: .internalError, message: "writing the file failed: \(error)"))
        case .tooLarge(let detail):
            return .giveUp(JobFailure(code: .fileTooLarge, message: detail))
        case .quotaExceeded(let detail):
            return .giveUp(JobFailure(code: .quotaExceeded, message: detail))
        case .checksumMismatch(let expected, let actual):
            return .giveUp(JobFailure(
                code: .checksumMismatch, message: "\(expected.algorithm.displayName) is \(actual), expected \(expected.value)"))
        case .unusableResponse(let detail):
            return .retry(JobFailure(code: .networkError, message: detail), retryAfter: nil)
        case .sizeUnderstated(let reported, let sent, let complete):
            // A file still growing on the server may have settled by the next attempt (which starts from zero).
            let sentText = complete ? "\(sent)" : "more (\(sent) so far)"
            return .retry(JobFailure(
                code: .networkError, message: "the server said the file has \(reported) bytes, but sent \(sentText): its size is wrong, so nothing received is kept"),
                retryAfter: nil)
        case .internalError(let detail):
            return .giveUp(JobFailure(code: .internalError, message: detail))
        case .curl(let code, let detail):
            return classify(curlCode: code, detail: detail)
        }
    }

    /// An upload's failure, classified by the same rules; giving up is `delivery_failed` (with the target's status),
    /// except for a refused destination. The retry's failure says what went wrong for the job's `retrying` wait.
    static func classifyDelivery(_ cause: FailureCause) -> FailureVerdict {
        let verdict = classify(cause)
        if case .forbiddenDestination = cause { return verdict }
        let message: String
        if case .httpStatus(let status, _) = cause {
            message = "the delivery target answered \(status)"
        } else {
            message = "the upload failed: \(verdict.failure.message)"
        }
        let failure = JobFailure(code: .deliveryFailed, message: message, httpStatus: verdict.failure.httpStatus)
        switch verdict {
        case .retry(_, let retryAfter): return .retry(failure, retryAfter: retryAfter)
        case .waitForSpace, .giveUp: return .giveUp(failure)
        }
    }

    private static func classify(curlCode code: Int32, detail: String) -> FailureVerdict {
        let text = detail.isEmpty ? CurlError.text(CURLcode(UInt32(code))) : detail
        let message = "\(text) (curl \(code))"
        switch CURLcode(UInt32(code)) {
        case CURLE_OPERATION_TIMEDOUT:
            return .retry(JobFailure(code: .timeout, message: message), retryAfter: nil)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PARTIAL_FILE,
             CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM,
             CURLE_WEIRD_SERVER_REPLY, CURLE_SSL_CONNECT_ERROR, CURLE_HTTP3, CURLE_AGAIN:
            return .retry(JobFailure(code: .networkError, message: message), retryAfter: nil)
        case CURLE_TOO_MANY_REDIRECTS:
            return .giveUp(JobFailure(code: .tooManyRedirects, message: message))
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .giveUp(JobFailure(code: .unsupportedScheme, message: message))
        case CURLE_URL_MALFORMAT:
            return .giveUp(JobFailure(code: .invalidURL, message: message))
        case CURLE_REMOTE_FILE_NOT_FOUND, CURLE_REMOTE_ACCESS_DENIED, CURLE_LOGIN_DENIED, CURLE_USE_SSL_FAILED:
            // An FTP or SFTP server's firm answer (no such file, no access, wrong login, no TLS): asking again
            // gets the same one.
            return .giveUp(JobFailure(code: .networkError, message: message))
        case CURLE_FILESIZE_EXCEEDED:
            return .giveUp(JobFailure(code: .fileTooLarge, message: message))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER:
            return .giveUp(JobFailure(code: .networkError, message: message))
        case CURLE_OUT_OF_MEMORY, CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK, CURLE_BAD_FUNCTION_ARGUMENT,
             CURLE_FAILED_INIT, CURLE_NOT_BUILT_IN, CURLE_UNKNOWN_OPTION:
            return .giveUp(JobFailure(code: .internalError, message: message))
        default:
            return .retry(JobFailure(code: .networkError, message: message), retryAfter: nil)
        }
    }
}
