@testable import FerryEngine
import Testing

struct GroupCommitTests {
    @Test func anItemAloneStartsAGroupAtOnce() {
        var groups = GroupCommit<Int>()
        #expect(groups.add(1) == [1])
        #expect(groups.isRunning)
        #expect(groups.groupEnded() == nil)
        #expect(!groups.isRunning)
        #expect(groups.add(2) == [2], "idle again: the next item does not wait")
    }

    @Test func itemsReadyDuringAGroupGoTogetherInTheNextOneInOrder() {
        var groups = GroupCommit<Int>()
        #expect(groups.add(1) == [1])
        for item in 2...5 { #expect(groups.add(item) == nil) }
        #expect(groups.waitingCount == 4)
        #expect(groups.groupEnded() == [2, 3, 4, 5])
        #expect(groups.isRunning, "the second group runs now")
        #expect(groups.add(6) == nil)
        #expect(groups.groupEnded() == [6])
        #expect(groups.groupEnded() == nil)
        #expect(!groups.isRunning && groups.waitingCount == 0)
    }
}
