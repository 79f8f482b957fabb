import FerryEngine
import FerryStore
import Foundation
import Logging

extension RunningService {
    /// Starts the loops that run until `stop` cancels them: the store's ballast laid (back) down when
    /// there is room, idempotency records purged hourly and, with `--retention`, the retention sweep. (The allocator's
    /// free memory is handed back by a `MemoryReturner`, on a queue of its own.)
    static func startChores(configuration: ServiceConfiguration, spool: Spool, ballast: StoreBallast, store: any JobStore,
                            supervisor: JobSupervisor, logger: Logger) -> [Task<Void, Never>] {
        var chores: [Task<Void, Never>] = []
        let minFreeSpace = configuration.minFreeSpace
        chores.append(Task {
            // Lays the store's ballast (back) down whenever there is room for it beyond the reserve.
            while !Task.isCancelled {
                if !ballast.isPresent, let free = spool.freeBytes(), free > minFreeSpace + 2 * ballast.size {
                    if ballast.ensure() { logger.info("store ballast in place", metadata: ["bytes": "\(ballast.size)"]) }
                }
                try? await Task.sleep(for: .seconds(10))
            }
        })
        chores.append(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(3600))
                do { try await store.purgeIdempotencyRecords(olderThan: Date().addingTimeInterval(-IdempotencyGate.keyLifetime)) }
                catch { logger.warning("purging idempotency records failed", metadata: ["error": "\(error)"]) }
                // Delivered and failed notices are kept a week for listing and sending again.
                do { try await store.purgeSettledNotices(olderThan: Date().addingTimeInterval(-7 * 24 * 3600)) }
                catch { logger.warning("purging settled webhook notices failed", metadata: ["error": "\(error)"]) }
            }
        })
        if let retention = configuration.retention {
            chores.append(Task {
                while !Task.isCancelled {
                    do { _ = try await supervisor.purge(PurgeSelection(cutoff: Date().addingTimeInterval(-retention))) }
                    catch { logger.warning("retention sweep failed", metadata: ["error": "\(error)"]) }
                    try? await Task.sleep(for: .seconds(RetentionSchedule.interval(for: retention)))
                }
            })
        }
        return chores
    }
}
