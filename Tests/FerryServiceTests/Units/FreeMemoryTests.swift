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

    @Test func aBlockAboveTheThresholdHasAMappingOfItsOwn() {
        FreeMemory.configureAllocator()
        let before = FreeMemory.figures()
        let block = UnsafeMutableRawPointer.allocate(byteCount: 4 << 20, alignment: 16)
        let during = FreeMemory.figures()
        block.deallocate()
        let after = FreeMemory.figures()
        #expect(during.mapped >= before.mapped + (4 << 20))
        #expect(after.mapped <= during.mapped - (4 << 20), "freed, the mapping is returned, not kept in an arena")
    }
}
