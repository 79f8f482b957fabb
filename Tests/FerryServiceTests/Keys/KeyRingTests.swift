import FerryStore
import Foundation
import Testing
@testable import FerryService

/// `KeyRing`'s record of uses: a use stays visible while it is being written to the store (a key listed between
/// `takeUses` and the write landing showed `lastUsedAt` null: seen once in `KeysEndToEndTests` on a busy machine).
@Suite("API keys: the ring's record of uses")
struct KeyRingTests {
    @Test func aUseStaysVisibleOnceTakenForWritingAndThroughAPut() throws {
        let token = KeyRing.newToken()
        let stored = APIKeyRecord(id: "k1", name: "reader", scope: .read, limits: APIKeyRecord.Limits(),
                                  digest: KeyRing.digest(ofToken: token), createdAt: Date(timeIntervalSince1970: 1_000))
        let ring = KeyRing([stored])
        let used = Date(timeIntervalSince1970: 2_000)
        #expect(ring.resolve(token: token, now: used)?.id == "k1")
        #expect(ring.key(id: "k1")?.lastUsedAt == used)
        #expect(ring.takeUses() == ["k1": used])
        #expect(ring.takeUses().isEmpty)
        #expect(ring.key(id: "k1")?.lastUsedAt == used, "taken for writing, still shown")
        // The store's copy, read again before the write landed (another node changed the key), keeps the use.
        var changed = stored
        changed.name = "renamed"
        ring.put(changed)
        #expect(ring.key(id: "k1")?.name == "renamed")
        #expect(ring.key(id: "k1")?.lastUsedAt == used)
    }
}
