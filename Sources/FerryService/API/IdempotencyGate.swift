/// Idempotency keys being processed right now, so that two concurrent requests with one key
/// cannot both create jobs. Records themselves live in the store (kept 24 hours).
actor IdempotencyGate {
    static let keyLifetime: Double = 24 * 3600
    private var inFlight: Set<String> = []

    func begin(_ key: String) -> Bool { inFlight.insert(key).inserted }
    func end(_ key: String) { inFlight.remove(key) }
}
