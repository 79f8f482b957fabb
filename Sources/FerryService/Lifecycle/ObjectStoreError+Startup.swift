import FerryEngine

extension ObjectStoreError {
    /// Which of the start-up failures this is, for the one-line error Ferry exits with: an unreachable store, a
    /// missing bucket or refused keys, then the store's own words.
    var startupReason: String {
        let what = switch kind {
        case .unreachable, .transfer: "the store is unreachable"
        case .notFound: "the bucket does not exist"
        case .credentialsRejected: "the credentials were refused"
        case .unavailable: "the store is failing"
        case .rejected, .malformedResponse, .invalidRequest, .stopped: "the store refused the bucket check"
        }
        return "\(what) (\(self))"
    }
}
