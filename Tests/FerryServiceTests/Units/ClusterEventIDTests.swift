import Testing
@testable import FerryService

/// Event ids with several nodes: stored ids scaled into blocks, progress numbered inside the current block.
@Suite("Cluster event ids")
struct ClusterEventIDTests {
    @Test func progressIsNumberedInsideTheBlockOfTheLastStoredEvent() {
        let block = ClusterEventID.block
        let ids = EventIDAllocator(startingAfter: ClusterEventID.published(2), block: block)
        #expect(ids.nextInBlock() == 2 * block + 1)
        ids.advance(to: ClusterEventID.published(5))
        #expect(ids.nextInBlock() == 5 * block + 1)
        #expect(ids.nextInBlock() == 5 * block + 2)
        // Another node may have numbered more progress in this block: any id in it may be replayed from.
        #expect(ids.replayCeiling == 6 * block - 1)
        #expect(ClusterEventID.stored(fromPublished: 5 * block + 2) == 5)
        // Never down.
        ids.advance(to: ClusterEventID.published(4))
        #expect(ids.lastAllocated == 5 * block + 2)
    }

    @Test func aUsedUpBlockGivesNoMoreIdsAndAsksForANewOneHalfway() {
        let block = ClusterEventID.block
        let ids = EventIDAllocator(startingAfter: 0, block: block)
        ids.advance(to: block - 2)
        #expect(ids.nextInBlock() == block - 1)
        #expect(ids.nextInBlock() == nil, "block + 0 is the next stored event's")
        #expect(!ClusterEventID.needsRefill(after: block + ClusterEventID.refillAt - 1))
        #expect(ClusterEventID.needsRefill(after: block + ClusterEventID.refillAt))
    }

    @Test func aSingleNodeAllocatorIsUnchanged() {
        let ids = EventIDAllocator(startingAfter: 7)
        #expect(ids.next() == 8)
        #expect(ids.replayCeiling == 8)
        #expect(ids.nextInBlock() == nil)
    }
}
