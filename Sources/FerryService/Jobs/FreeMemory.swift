import CLinux
import Foundation

/// Keeps the allocator's footprint close to what Ferry uses. Stateless; call from anywhere.
enum FreeMemory {
    /// Hands memory the allocator holds but no longer uses back to the system, after work that allocated and
    /// freed a lot at once (recovery reads every job; a burst, see ``worthReturning(_:floor:)``). Costs a walk over
    /// the heap's free lists (a few milliseconds for a heap of ~100 MB), so only after such work.
    static func returnToSystem() {
        _ = malloc_trim(0)
    }

    /// Sets glibc's allocator up for a long-running server with many threads. Call once at start-up, before the
    /// busy threads exist. A setting given in the environment (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`) wins.
    ///
    /// - Arenas: capped at `arenas` (by default up to 8 per core). Ferry's work runs on many threads (Dispatch
    ///   queues, the concurrency pool, the writers' disk lanes: `DiskLanes`); with an arena each, memory freed on one
    ///   thread is not reused by the next, and a long-running server's RSS creeps. Measured with the load suite
    ///   (60 s, release): RSS growth after the first third 16.6% with the default, 6.8% with 2 arenas.
    /// - Large allocations: every block of `mmapThreshold` bytes or more gets a mapping of its own, returned to the
    ///   system when freed. glibc's default threshold starts at 128 KiB but rises to the size of every such block
    ///   freed (up to 32 MiB), after which large short-lived buffers (a transfer's 1 MiB run buffer, a stream's
    ///   replay) are carved out of the arenas, and the holes they leave are kept, resident: in a 6-minute soak of
    ///   the load suite the arenas held 563 MB free beside 51 MB in use (RSS 110 MB after a minute, 480 MB after
    ///   five). A fixed threshold also stops that rise.
    static func configureAllocator(arenas: Int32 = 2, mmapThreshold: Int32 = 256 * 1024) {
        if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, arenas) }
        fixMmapThreshold(mmapThreshold)
    }

    /// The large-allocation part of `configureAllocator`: blocks of `bytes` or more get a mapping of their own.
    static func fixMmapThreshold(_ bytes: Int32 = 256 * 1024) {
        if ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(M_MMAP_THRESHOLD, bytes) }
    }


    /// What the allocator holds, from glibc's `mallinfo2` (which locks each arena in turn: for `/metrics`, not for
    /// hot paths). `inUse` growing means live objects (a leak, or a structure without a bound); `free` growing
    /// while `inUse` stays means memory freed but kept by the allocator (fragmentation, arenas).
    struct Figures: Sendable, Equatable {
        /// Bytes of live allocations, in the arenas and in chunks of their own (`mmap`).
        var inUse: Int
        /// Bytes the arenas hold free (not returned to the system).
        var free: Int
        /// Bytes of allocations with an `mmap` of their own (large ones), included in `inUse`.
        var mapped: Int
    }

    /// Whether the arenas hold enough free memory to be worth a `returnToSystem()`: at least `floor` bytes free, and
    /// at least a quarter of what they hold in use. What a burst (streams catching up, a batch of jobs) allocated
    /// and freed stays resident in the arenas' holes otherwise; a trim hands those pages back and the next burst
    /// faults them in again. `free` still counts pages already handed back, so while the arenas hold that much the
    /// trim repeats at each check: a walk of their free lists, a few milliseconds.
    static func worthReturning(_ figures: Figures, floor: Int = 16 << 20) -> Bool {
        figures.free >= floor && figures.free * 4 >= figures.inUse - figures.mapped
    }

    /// How often the service looks (`MemoryReturner`).
    static let checkInterval: Duration = .seconds(10)

    static func figures() -> Figures {
        let info = mallinfo2()
        return Figures(inUse: Int(info.uordblks + info.hblkhd), free: Int(info.fordblks), mapped: Int(info.hblkhd))
    }
}
