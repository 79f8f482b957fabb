import Dispatch
import Synchronization

/// A serial queue whose work runs on a lane (a serial `DispatchQueue` that other such queues share, see `DiskLanes`)
/// a turn at a time: at most `turn` blocks, then the queue goes to the back of the lane behind the queues that
/// waited meanwhile, so a queue that is kept fed (a fast download's runs) holds the lane for one turn, not until it
/// is empty (issue 32).
///
/// A `DispatchQueue` targeting the lane would do neither: libdispatch drains a queue that targets a serial queue until
/// it is empty before the lane serves the next one, so one busy writer held its lane, and every writer queued behind
/// it, for as long as it was fed.
///
/// Blocks run in the order of `async` calls, one at a time, never two at once (the lane is serial); there is no
/// `sync`: a lane never waits for another lane. Thread-safe: the blocks waiting and whether a turn is queued are
/// under `state`'s lock.
final class LaneQueue: Sendable {
    let label: String
    /// The lane the turns run on.
    let lane: DispatchQueue
    /// The most blocks one turn runs.
    let turn: Int

    private struct State {
        var blocks: [@Sendable () -> Void] = []
        /// Index of the next block to run in `blocks`.
        var head = 0
        /// A turn is queued on the lane or running.
        var scheduled = false

        mutating func next() -> (@Sendable () -> Void)? {
            guard head < blocks.count else {
                blocks.removeAll(keepingCapacity: blocks.capacity <= 64)
                head = 0
                return nil
            }
            let block = blocks[head]
            head += 1
            if head >= 64, head * 2 >= blocks.count {
                blocks.removeFirst(head)
                head = 0
            }
            return block
        }
    }

    private let state = Mutex(State())

    /// The blocks per turn when not given: one run of a writer is at most 1 MiB and a slice of read-back 8 MiB.
    static let defaultTurn = 4

    init(label: String, lane: DispatchQueue, turn: Int = LaneQueue.defaultTurn) {
        self.label = label
        self.lane = lane
        self.turn = max(1, turn)
    }

    /// Queues `block`; it runs after every block queued before it.
    func async(execute block: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            state.blocks.append(block)
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if start { lane.async { self.runTurn() } }
    }

    /// Runs up to `turn` blocks, then queues the next turn behind whatever the lane has waiting.
    private func runTurn() {
        for _ in 0..<turn {
            guard let block = state.withLock({ $0.next() }) else { break }
            block()
        }
        let more = state.withLock { state -> Bool in
            guard state.head < state.blocks.count else {
                state.scheduled = false
                return false
            }
            return true
        }
        if more { lane.async { self.runTurn() } }
    }
}
