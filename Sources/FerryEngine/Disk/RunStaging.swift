import Foundation

/// The run a `FileWriter` is gathering and the spare run buffers it reuses (`RunBuffer`): all the run memory a
/// writer keeps is the staged run and at most `spareLimit` spares of `runCapacity` bytes; runs in flight belong to
/// the writer's queues until they are recycled here.
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

    private let lock = NSLock()
    private var buffer: RunBuffer?
    private var offset: Int64 = 0
    private var completions: [@Sendable (SystemError?) -> Void] = []
    private var spares: [RunBuffer] = []

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

    /// Keeps a written (and hashed) run's buffer for a later run, unless `spareLimit` are kept already or it is
    /// not of the run size.
    func recycle(_ buffer: RunBuffer) {
        guard buffer.capacity == Self.runCapacity else { return }
        lock.withLock {
            if spares.count < Self.spareLimit { spares.append(buffer) }
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
        self.buffer = nil
        completions = []
        ship(run)
    }
}
