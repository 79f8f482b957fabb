import Glibc
import Testing
@testable import FerryService

/// The allocator settings and figures (`FreeMemory`): when free memory is worth handing back, and that the figures
/// follow a large allocation.
@Suite struct FreeMemoryTests {
    @Test func freeMemoryIsHandedBackOnlyWhenItIsLargeBesideWhatIsInUse() {
        let mib = 1 << 20
        // Little free: kept (the next burst reuses it without faults).
        #expect(!FreeMemory.worthReturning(.init(inUse: 40 * mib, free: 8 * mib, mapped: 0)))
        // Much free, beside little in use: handed back.
        #expect(FreeMemory.worthReturning(.init(inUse: 40 * mib, free: 30 * mib, mapped: 0)))
        // Free is judged against the arenas' part of what is in use, not the mapped blocks.
        #expect(FreeMemory.worthReturning(.init(inUse: 340 * mib, free: 20 * mib, mapped: 300 * mib)))
        #expect(!FreeMemory.worthReturning(.init(inUse: 340 * mib, free: 20 * mib, mapped: 0)))
        // The floor.
        #expect(!FreeMemory.worthReturning(.init(inUse: 0, free: 15 * mib, mapped: 0)))
        #expect(FreeMemory.worthReturning(.init(inUse: 0, free: 16 * mib, mapped: 0)))
    }

    /// Judged by the block's own chunk, not by the process's figures, which other tests' threads move meanwhile. glibc
    /// serves even a large request from a free chunk of an arena when one is big enough; only a request the arenas
    /// cannot hold (more than all they hold free, with room for frees meanwhile) shows where the threshold sends it.
    @Test func aBlockAboveTheThresholdHasAMappingOfItsOwn() throws {
        FreeMemory.fixMmapThreshold()
        let size = max(4 << 20, FreeMemory.figures().free + (64 << 20))
        let large = try #require(malloc(size)), small = try #require(malloc(64 << 10))
        defer { free(large); free(small) }
        #expect(Self.hasMappingOfItsOwn(large), "a block of \(size) bytes, above the threshold, is mapped on its own")
        #expect(!Self.hasMappingOfItsOwn(small), "a block below it comes from an arena")
    }

    /// Whether glibc gave the block at `pointer` (from `malloc`) a mapping of its own: the `IS_MMAPPED` bit of the
    /// chunk's size word, just before the block. Unlike `FreeMemory.figures()`, it does not move with other threads.
    private static func hasMappingOfItsOwn(_ pointer: UnsafeMutableRawPointer) -> Bool {
        (pointer - MemoryLayout<Int>.size).load(as: Int.self) & 0x2 != 0
    }
}
