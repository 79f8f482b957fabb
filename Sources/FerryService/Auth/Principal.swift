import FerryStore

/// Who a request speaks for, resolved once per request by `AccessGuard`: the administrator (the `--token`, the
/// `--read-token`, or anyone in open mode) or one API key. `JobAccess` turns it into what the request may see.
enum Principal: Sendable, Equatable {
    case administrator
    case key(KeyIdentity)
}

/// What the guard knows of a key it accepted: enough to decide access, without its token or digest.
struct KeyIdentity: Sendable, Equatable {
    let id: String
    let name: String
    let scope: APIKeyRecord.Scope

    init(id: String, name: String, scope: APIKeyRecord.Scope) {
        self.id = id
        self.name = name
        self.scope = scope
    }

    init(_ record: APIKeyRecord) {
        self.init(id: record.id, name: record.name, scope: record.scope)
    }

    /// What requests made with the key may do: a `read` key only reads.
    var access: AccessLevel { scope == .read ? .readOnly : .full }
}
