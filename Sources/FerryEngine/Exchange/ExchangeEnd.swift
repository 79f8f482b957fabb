/// How an exchange ended (`Exchange.ended(code:detail:segmentEnd:)`).
enum ExchangeEnd: Equatable, Sendable {
    /// Every byte it was to deliver was received (up to its segment's end, or the whole file of unknown size).
    case received
    /// The file changed or the origin does not serve ranges as asked: start the download again from zero.
    case restart(reason: String, singleConnection: Bool)
    /// The exchange failed; the cause is classified (`FailureClassifier`) into a retry or a failure.
    case failed(FailureCause)
}
