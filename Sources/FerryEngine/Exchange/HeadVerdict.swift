/// What an exchange does with its final response head, judged before the first body byte (`Exchange`).
enum HeadVerdict: Equatable, Sendable {
    /// Write the body from `offset`. `total` is the file's size when the response gives it. `discarding` says why
    /// the bytes on disk before `offset` are thrown away (the origin sent the whole file to a range request).
    case accept(offset: Int64, total: Int64?, discarding: String?)
    /// 416 whose `bytes */N` equals the bytes on disk: the file is already complete; the body is discarded.
    case complete(total: Int64)
    /// An error status: the body is discarded and the failure classified when the exchange ends.
    case httpError(status: Int, retryAfter: Double?)
    /// The answer cannot be used: stop, discard the bytes on disk and ask again from zero (with one connection
    /// only, when the origin ignores ranges).
    case restart(reason: String, singleConnection: Bool)
    /// The file is larger than the limit.
    case tooLarge(total: Int64, limit: Int64)

    /// Whether the exchange goes on (its body is written or discarded) rather than being stopped at once.
    var continues: Bool {
        switch self {
        case .accept, .complete, .httpError: return true
        case .restart, .tooLarge: return false
        }
    }
}
