import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// A key's `bytesPerDay` in the supervisor: its jobs parked when the window fills, and late engine events of a
/// parked job not taken for a new start.
@Suite("Job supervisor: a key's bytes per day")
struct DailyBytesSupervisorTests {
    static let key = APIKeyRecord(id: "k1", name: "metered", scope: .write,
                                  limits: APIKeyRecord.Limits(bytesPerDay: 1_000), digest: "d", createdAt: Date())

    @Test func theKeysJobsWaitOnceItsWindowIsFullAndLateStartsDoNotUndoIt() async throws {
        let h = SupervisorHarness(keys: KeyRing([Self.key]))
        let running = try #require(try await h.supervisor.create([SupervisorHarness.draft("http://example.org/a.bin")],
                                                                  owner: Self.key.id).first.flatMap(Self.created))
        let queued = try #require(try await h.supervisor.create([SupervisorHarness.draft("http://example.org/b.bin")],
                                                                 owner: Self.key.id).first.flatMap(Self.created))
        await h.supervisor.apply(.started(id: running.id, offset: 0))
        await h.supervisor.apply(.progress(id: running.id, TransferProgress(bytesReceived: 1_200, bytesExpected: 10_000,
                                                                             bytesPerSecond: 100, eta: 88)))
        for id in [running.id, queued.id] {
            let job = try #require(await h.job(id))
            #expect(job.state == .waiting && job.error?.code == .quotaExceeded, "\(id): \(job.state) \(String(describing: job.error))")
            #expect(h.engine.log.contains("pause \(id)"))
        }
        // The queued job's start was on its way: it does not show it downloading again.
        await h.supervisor.apply(.started(id: queued.id, offset: 0))
        await h.supervisor.apply(.waiting(id: queued.id, reason: .queued))
        let late = try #require(await h.job(queued.id))
        #expect(late.state == .waiting && late.error?.code == .quotaExceeded)
        // A new job of the key is refused while the window is full.
        let refused = try await h.supervisor.create([SupervisorHarness.draft("http://example.org/c.bin")], owner: Self.key.id)
        guard case .refused(.keyDailyBytes(let limit, let retryAfter)) = refused.first else {
            Issue.record("not refused: \(refused)")
            return
        }
        #expect(limit == 1_000 && (1...86_400).contains(retryAfter))
    }

    /// A revoked key's parked jobs continue (its limit is gone with it), its window is dropped, and what its jobs
    /// fetch afterwards counts for no key.
    @Test func aRevokedKeysJobsContinueAndItsWindowIsForgotten() async throws {
        let keys = KeyRing([Self.key])
        let h = SupervisorHarness(keys: keys)
        let job = try #require(try await h.supervisor.create([SupervisorHarness.draft("http://example.org/a.bin")],
                                                              owner: Self.key.id).first.flatMap(Self.created))
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 1_200, bytesExpected: 10_000,
                                                                         bytesPerSecond: 100, eta: 88)))
        #expect(try #require(await h.job(job.id)).error?.code == .quotaExceeded)
        #expect(await h.supervisor.dailyBytes.keyCount == 1)

        keys.remove(Self.key.id)
        await h.supervisor.keyLimitsChanged(Self.key.id)
        let continued = try #require(await h.job(job.id))
        #expect(continued.error == nil, "\(String(describing: continued.error))")
        #expect(await h.supervisor.dailyBytes.keyCount == 0)
        await h.supervisor.apply(.started(id: job.id, offset: 1_200))
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 2_400, bytesExpected: 10_000,
                                                                         bytesPerSecond: 100, eta: 76)))
        #expect(await h.supervisor.dailyBytes.keyCount == 0)
    }

    static func created(_ answer: JobSupervisor.Created) -> JobRecord? {
        if case .created(let job) = answer { return job }
        return nil
    }
}
