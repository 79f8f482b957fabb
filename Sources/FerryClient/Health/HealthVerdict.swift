/// What a health probe found: the service answered `200`, or why it is not healthy (one line).
public enum HealthVerdict: Sendable, Equatable {
    case healthy
    case unhealthy(String)

    /// The verdict for an answer of `status` from `url`. Pure.
    public static func answer(status: Int, from url: String) -> HealthVerdict {
        status == 200 ? .healthy : .unhealthy("\(url) answered HTTP \(status), not 200")
    }
}
