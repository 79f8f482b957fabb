import FerryHTTP

/// The recent batches of frames that one group of identical subscribers is sent, kept once for the
/// whole group; each subscriber holds only a cursor (the sequence number of the next batch it needs).
///
/// Owner: the service's events queue (``EventHub``), one window per subscriber group. A pure value:
/// no I/O, no locking.
///
/// A batch is the concatenated frames one ``SubscriberQueue/take(now:writable:)`` of the group's shared
/// queue returned, framed once for the wire as a `SharedChunk` (ids strictly increasing, and increasing from batch to batch). The window keeps the
/// newest batches while their bytes stay within `maxBytes` (always at least the newest one); a cursor
/// older than the oldest kept batch has fallen out of the window (``pending(from:)`` answers `nil`), and
/// the subscriber must be resynchronized from the ``EventLog`` or closed.
public struct FanoutWindow: Sendable {
    /// One batch: its frames and the greatest event id in it.
    public struct Batch: Sendable {
        public let chunk: SharedChunk?
        public let lastID: Int64
        /// Payload bytes (the frames).
        var byteCount: Int { chunk?.payloadCount ?? 0 }
    }

    /// What a cursor is owed.
    public struct Pending: Sendable {
        /// The batches from the cursor on, oldest first (empty when the cursor is current).
        public var batches: ArraySlice<Batch>
        /// Their total size in bytes.
        public var byteCount: Int
    }

    /// Bytes of batches kept beyond the newest one.
    public let maxBytes: Int

    /// `batches[head...]` are kept; sequence number of `batches[i]` is `firstSequence + i - head`.
    private var batches: [Batch] = []
    private var head = 0
    private var firstSequence = 0
    /// Bytes of the kept batches.
    public private(set) var byteCount = 0

    public init(maxBytes: Int = 1 << 20) {
        self.maxBytes = maxBytes
    }

    /// The cursor of a subscriber that has everything: the sequence number the next batch will get.
    public var nextSequence: Int { firstSequence + (batches.count - head) }

    /// The number of kept batches.
    public var count: Int { batches.count - head }

    /// Adds a batch and evicts the oldest ones beyond `maxBytes`.
    /// - Returns: the batch's sequence number.
    @discardableResult
    public mutating func append(_ chunk: SharedChunk, lastID: Int64) -> Int {
        let sequence = nextSequence
        batches.append(Batch(chunk: chunk, lastID: lastID))
        byteCount += chunk.payloadCount
        while count > 1 && byteCount - batches[head].byteCount >= maxBytes {
            byteCount -= batches[head].byteCount
            batches[head] = Batch(chunk: nil, lastID: 0)   // release the bytes now
            head += 1
            firstSequence += 1
        }
        if head >= 64 && head * 2 >= batches.count {
            batches.removeFirst(head)
            head = 0
        }
        return sequence
    }

    /// The batches a subscriber at `cursor` has not been sent yet, or `nil` when some of them were
    /// evicted (the cursor fell out of the window). A cursor beyond ``nextSequence`` is a programmer error.
    public func pending(from cursor: Int) -> Pending? {
        precondition(cursor <= nextSequence, "a cursor cannot be ahead of the window")
        guard cursor >= firstSequence else { return nil }
        let slice = batches[(head + cursor - firstSequence)...]
        return Pending(batches: slice, byteCount: slice.reduce(0) { $0 + $1.byteCount })
    }
}
