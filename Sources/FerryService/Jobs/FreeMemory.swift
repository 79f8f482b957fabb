import CLinux
import Foundation

/// Keeps the allocator's footprint close to what Ferry uses. Stateless; call from anywhere.
enum FreeMemory {
    /// Hands memory the allocator holds but no longer uses back to the system, after work that allocated and
    /// freed a lot at once (recovery reads every job). Costs a walk over the heap's free lists (a few
    /// milliseconds for a heap of ~100 MB), so only after such work.
    static func returnToSystem() {
        _ = malloc_trim(0)
    }

    /// Caps glibc's malloc arenas (by default up to 8 per core). Ferry's work runs on many threads (Dispatch
    /// queues, the concurrency pool, one writer queue per transfer); with an arena each, memory freed on one
    /// thread is not reused by the next, and a long-running server's RSS creeps. Measured with the load suite
    /// (60 s, release): RSS growth after the first third 16.6% with the default, 6.8% with 2 arenas, with no
    /// loss of throughput. `MALLOC_ARENA_MAX` in the environment, when set, wins. Call once at start-up,
    /// before the busy threads exist.
    static func limitArenas(to count: Int32 = 2) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = mallopt(M_ARENA_MAX, count)
    }
}
