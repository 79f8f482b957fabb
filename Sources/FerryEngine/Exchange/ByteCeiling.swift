/// The most bytes a file may reach, and the failure when a body goes past it (the size limit, or the room the
/// spool's quota left). Checked per chunk when the response did not give the file's size up front.
struct ByteCeiling: Equatable, Sendable {
    let bytes: Int64
    let failure: FailureCause
}
