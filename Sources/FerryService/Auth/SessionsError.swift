/// Why a session change could not be made durable (a logout's revocation, or the rotation of the session secret).
/// The API answers it with `503 unavailable` (`AccessGuard.logout`).
enum SessionsError: Error, Sendable, Equatable {
    case notSaved(String)

    var message: String {
        switch self {
        case .notSaved(let reason): return "the logout could not be saved: \(reason)"
        }
    }
}
