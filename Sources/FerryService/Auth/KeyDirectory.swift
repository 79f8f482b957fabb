import FerryStore
import Foundation
import Logging

/// Makes, changes and revokes API keys: the store first (durable, and with several nodes notified on `ferry_keys`),
/// then the `KeyRing` the guard reads, then the key's open event streams (closed on revocation). Also reads keys
/// again when another node says one changed (`heard`), and writes noted uses (`lastUsedAt`) in batches.
///
/// Holds no state of its own: the ring (its `Mutex`) and the store (its queue) own theirs. Safe from any task.
struct KeyDirectory: Sendable {
    let store: any JobStore
    let ring: KeyRing
    /// Closes the event streams opened with a key (`EventHub.closeStreams(ofKey:)`).
    let closeStreams: @Sendable (String) -> Void
    /// Applies a key's limits where they hold (the engine's share of slots); nil: the key is gone.
    let limitsChanged: @Sendable (String, APIKeyRecord.Limits?) -> Void
    let logger: Logger

    /// A new key and its token (shown this once; only its digest is stored).
    func create(name: String, scope: APIKeyRecord.Scope, limits: APIKeyRecord.Limits, now: Date = Date()) async throws
        -> (key: APIKeyRecord, token: String)
    {
        let token = KeyRing.newToken()
        let key = APIKeyRecord(id: JobSupervisor.newID(), name: name, scope: scope, limits: limits,
                               digest: KeyRing.digest(ofToken: token), createdAt: now).storedForm
        try await store.insertKey(key)
        ring.put(key)
        limitsChanged(key.id, key.limits)
        return (key, token)
    }

    /// Every key, oldest first, with its latest use.
    func all() async throws -> [APIKeyRecord] {
        try await store.keys().map { ring.key(id: $0.id) ?? $0 }
    }

    func key(id: String) -> APIKeyRecord? { ring.key(id: id) }

    /// Stores `key` as changed (name, scope, limits) and uses it from now on. - Throws: `JobStoreError.notFound`.
    func update(_ key: APIKeyRecord) async throws {
        try await store.updateKey(key)
        ring.put(key)
        limitsChanged(key.id, key.limits)
    }

    /// Revokes a key at once: refused from the next request, its streams closed. Whether it existed.
    func revoke(id: String) async throws -> Bool {
        let deleted = try await store.deleteKey(id: id)
        forget(id)
        return deleted
    }

    /// Another node made, changed or revoked key `id` (`ferry_keys`): read it again.
    func heard(_ id: String) async {
        do {
            if let key = try await store.key(id: id) {
                ring.put(key)
                limitsChanged(key.id, key.limits)
            } else {
                forget(id)
            }
        } catch {
            logger.warning("reading a changed API key failed", metadata: ["key": "\(id)", "error": "\(error)"])
        }
    }

    /// Reads every key again (after the notification connection was lost: changes may have been missed).
    func reloadAll() async {
        do {
            let stored = try await store.keys()
            let kept = Set(stored.map(\.id))
            for key in stored {
                ring.put(key)
                limitsChanged(key.id, key.limits)
            }
            for id in ring.ids() where !kept.contains(id) { forget(id) }
        } catch {
            logger.warning("reading the API keys failed", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the uses noted since the last call (`lastUsedAt`).
    func saveUses() async {
        let uses = ring.takeUses()
        guard !uses.isEmpty else { return }
        do { try await store.touchKeys(uses) } catch {
            logger.warning("saving API key uses failed", metadata: ["error": "\(error)"])
        }
    }

    private func forget(_ id: String) {
        ring.remove(id)
        closeStreams(id)
        limitsChanged(id, nil)
    }
}
