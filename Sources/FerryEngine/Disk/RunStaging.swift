import Foundation

/// The run a `FileWriter` is gathering and the spare run buffers it reuses (`RunBuffer`): all the run memory a
/// writer keeps is the staged run and at most `spareLimit` spares of `runCapacity` bytes while runs are in flight,
/// `caughtUpSpareLimit` once none is; runs in flight belong to the writer's queues until they are recycled here.
///
/// Its own lock guards everything, since it is used from three queues: pieces are staged on the caller's queue
/// (the engine queue, one at a time), written runs are recycled on the writer's queue or its digest queue, and the
/// spares are dropped from the digest queue when the file closes. `stage` and `flush` hand a finished run to
/// their `ship` closure with the lock held, so runs are shipped in staging order.
final class RunStaging: @unchecked Sendable {
    /// A contiguous run of staged pieces, with each piece's completion in order.
    struct Run {
        let buffer: RunBuffer
        let offset: Int64
        let completions: [@Sendable (SystemError?) -> Void]
    }

    /// The largest run; a longer burst is shipped in several.
    static let runCapacity = 1 << 20
    /// Spare buffers kept: a run in flight per megabyte of the engine's write buffer (8 MiB), so a writer that
    /// fell behind and caught up again does not allocate.
    static let spareLimit = 8
    /// Spare buffers kept once every shipped run is back (the writer caught up): a slow download alternates two
    /// buffers, so one spare is all it uses; what a stall made it allocate is freed. Without this, each of many slow
    /// downloads kept the spares of its worst stall to its end: in an hour's soak of 200 downloads at 8 KiB/s, one
    /// connection each throughout, the heap's large blocks grew from 312 to 490 MB (resident as far as catch-ups
    /// had filled them).
    static let caughtUpSpareLimit = 1

    private let lock = NSLock()
    private var buffer: RunBuffer?
    private var offset: Int64 = 0
    private var completions: [@Sendable (SystemError?) -> Void] = []
    private var spares: [RunBuffer] = []
    /// Runs shipped and not recycled yet.
    private var inFlight = 0

    /// Copies `bytes`, to be written at `offset`, into the staged run, shipping the run first when `bytes` do not
    /// continue it or it has no room for them. A piece larger than a run (libcurl's are not) gets a buffer of its
    /// own, never kept as a spare.
    func stage(_ bytes: UnsafeRawBufferPointer, at offset: Int64, completion: @escaping @Sendable (SystemError?) -> Void,
               ship: (Run) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if let buffer, buffer.count > 0, self.offset + Int64(buffer.count) != offset || buffer.room < bytes.count {
            shipStaged(ship)
        }
        if buffer == nil {
            self.offset = offset
            let fresh = bytes.count <= Self.runCapacity
                ? spares.popLast() ?? RunBuffer(capacity: Self.runCapacity)
                : RunBuffer(capacity: bytes.count)
            fresh.reset(startingAt: offset)
            buffer = fresh
        }
        buffer?.append(bytes)
        completions.append(completion)
    }

    /// Ships the staged run, if any.
    func flush(ship: (Run) -> Void) {
        lock.withLock { shipStaged(ship) }
    }

    /// Keeps a written (and hashed) run's buffer for a later run, unless the limit (`spareLimit` while runs are in
    /// flight, `caughtUpSpareLimit` once none is) is reached or it is not of the run size.
    func recycle(_ buffer: RunBuffer) {
        lock.withLock {
            inFlight = max(0, inFlight - 1)
            let limit = inFlight == 0 ? Self.caughtUpSpareLimit : Self.spareLimit
            if buffer.capacity == Self.runCapacity, spares.count < limit { spares.append(buffer) }
            if spares.count > limit { spares.removeLast(spares.count - limit) }
        }
    }

    /// Forgets the spare buffers (the file is closed; a reopened one allocates anew).
    func dropSpares() {
        lock.withLock { spares.removeAll() }
    }

    /// Spare buffers kept now.
    var spareCount: Int { lock.withLock { spares.count } }

    /// Bytes staged and not yet shipped.
    var stagedCount: Int { lock.withLock { buffer?.count ?? 0 } }

    /// With `lock` held.
    private func shipStaged(_ ship: (Run) -> Void) {
        guard let buffer, buffer.count > 0 else { return }
        let run = Run(buffer: buffer, offset: offset, completions: completions)
        inFlight += 1
        self.buffer = nil
        completions = []
        ship(run)
    }
}
