/// What a credential may do: everything (`--token`, or the open API on loopback), or only read (`--read-token`:
/// `GET`, `HEAD`, event streams, content, metrics; anything else is `403 forbidden`).
enum AccessLevel: String, Sendable, Equatable {
    case full
    case readOnly = "read-only"
}
