import FerryHTTP

extension APIError {
    /// The status and code of each way the supervisor refuses an action (API.md, "Errors").
    init(_ error: JobsError) {
        switch error {
        case .notFound: self.init(.notFound, error.description)
        case .notApplicable, .creationInProgress: self.init(.conflict, error.description)
        case .spoolFull: self.init(.quotaExceeded, error.description)
        case .storeFailed, .ownerSilent: self.init(.unavailable, error.description)
        case .tooLargeToForward: self.init(.payloadTooLarge, error.description)
        case .keyJobLimit: self.init(.rateLimited, error.description)
        case .keyDailyBytes(_, let retryAfter):
            self.init(.rateLimited, error.description, headers: ["Retry-After": "\(retryAfter)"])
        case .lostAnswer: self.init(.internal, error.description)
        }
    }
}

/// A refusal thrown by the supervisor answers as its `APIError`.
extension JobsError: HTTPResponseError {
    func response(for request: HTTPRequest) -> HTTPResponse { APIError(self).response(for: request) }
}
