import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A streamed response body owned by one connection's queue; every public method is safe to call from any thread.
///
/// Writes are queued and never block. `bufferedByteCount` counts bytes written by the producer and not yet handed to
/// the socket, so producers can back off with `onDrain`. State is confined to `queue` (the connection's queue), except
/// the two atomics read from any thread and the direct lane, guarded by its own lock.
///
/// The direct lane: while the connection has sent everything of this body and holds nothing for it, it lends the
/// socket to producers (``writeShared(_:)`` then writes from the producer's thread, one `sendmsg` for several chunks,
/// no hop to the connection's queue); it takes the socket back under the same lock before it writes anything itself
/// or closes, so the fd is never used after the connection let it go.
public final class ResponseStream: @unchecked Sendable {
    let queue: DispatchQueue
    weak var sink: ResponseStreamSink?

    private let buffered = Atomic<Int>(0)
    private let accepting = Atomic<Bool>(true)

    /// The socket while lent to producers, and what their writes left for the connection.
    struct DirectLane {
        /// The connection's socket, or -1 while the connection keeps it.
        var fd: Int32 = -1
        var chunked = false
        /// Wire bytes a producer's write left unsent (the socket took part of it): the connection sends them first.
        var tail: [UInt8] = []
        /// Wire bytes producers sent through the lane since the connection last took it back.
        var sent = 0
    }
    private let lane = Mutex(DirectLane())

    /// A queued piece of the body: bytes, or a region of a file the connection sends with sendfile(2).
    enum Piece {
        case bytes([UInt8])
        case file(StreamFileRegion)
    }

    // Confined to `queue`.
    private var pending: [Piece] = []
    private(set) var finishRequested = false
    private(set) var abortRequested = false
    private(set) var didClose = false
    private var drainWaiters: [(threshold: Int, handler: @Sendable () -> Void)] = []
    private var closeHandlers: [@Sendable () -> Void] = []

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Queues `bytes` for sending. Ignored once the stream is closed or finished.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, accepting.load(ordering: .acquiring) else { return }
        buffered.add(bytes.count, ordering: .relaxed)
        queue.async { self.enqueue(.bytes(bytes), count: bytes.count) }
    }

    /// Queues `length` bytes of `file` from `offset`, sent from the file with sendfile(2) (no copy in the process):
    /// they must be in the file, and stay as they are, until sent. Counted in `bufferedByteCount` like `write`'s.
    /// Ignored once the stream is closed or finished.
    public func writeFile(_ file: StreamFile, offset: Int64, length: Int) {
        guard length > 0, accepting.load(ordering: .acquiring) else { return }
        buffered.add(length, ordering: .relaxed)
        let region = StreamFileRegion(file: file, offset: offset, length: length)
        queue.async { self.enqueue(.file(region), count: length) }
    }

    /// Sends `chunks` in order, each one piece of the body: straight to the socket when the connection lent it and
    /// nothing written before is still queued (the same immutable bytes for every stream, gathered by one `sendmsg`),
    /// otherwise, or for what the socket does not take at once, through the connection's queue like ``write(_:)``.
    /// Callable from any thread; a producer keeps its writes to one stream in order by making them from one serial queue.
    public func writeShared(_ chunks: [SharedChunk]) {
        guard !chunks.isEmpty, accepting.load(ordering: .acquiring) else { return }
        let (queuedFrom, wake) = lane.withLock { lane -> (Int, Bool) in
            guard lane.fd >= 0, buffered.load(ordering: .acquiring) == 0 else { return (0, false) }
            var index = 0
            while index < chunks.count {
                let piece = chunks[index..<min(index + Self.maxChunksPerSend, chunks.count)]
                let total = piece.reduce(0) { $0 + $1.wireCount(chunked: lane.chunked) }
                let sent = Self.send(piece, chunked: lane.chunked, to: lane.fd)
                if sent == total {
                    lane.sent += sent
                    index = piece.endIndex
                    continue
                }
                // Full, partly taken or failed: the connection takes over (and meets any error itself).
                lane.fd = -1
                guard sent > 0 else { return (index, true) }
                lane.sent += sent
                lane.tail = SharedChunk.remainder(of: piece, chunked: lane.chunked, after: sent)
                buffered.add(lane.tail.count, ordering: .relaxed)
                return (piece.endIndex, true)
            }
            return (chunks.count, false)
        }
        for chunk in chunks[queuedFrom...] { write(chunk.payload) }
        if wake, queuedFrom == chunks.count {
            queue.async { self.sink?.streamDidChange(self) }
        }
    }

    /// Chunks gathered into one `sendmsg`.
    static let maxChunksPerSend = 64

    /// One `sendmsg` of the chunks' wire bytes (non-blocking, no SIGPIPE). Returns the bytes sent, or -1.
    private static func send(_ chunks: ArraySlice<SharedChunk>, chunked: Bool, to fd: Int32) -> Int {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: chunks.count) { vectors in
            for (slot, chunk) in zip(vectors.indices, chunks) {
                let wire = chunk.wire(chunked: chunked)
                vectors[slot] = iovec(iov_base: UnsafeMutableRawPointer(mutating: wire.baseAddress), iov_len: wire.count)
            }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = chunks.count
            while true {
                let n = sendmsg(fd, &message, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if n < 0 && errno == EINTR { continue }
                return n
            }
        }
    }

    /// The connection-queue half of a write (`count` bytes already counted in `buffered`).
    private func enqueue(_ piece: Piece, count: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !didClose, !finishRequested else {
            buffered.subtract(count, ordering: .relaxed)
            return
        }
        pending.append(piece)
        sink?.streamDidChange(self)
    }

    /// Bytes queued and not yet written to the socket.
    public var bufferedByteCount: Int { buffered.load(ordering: .relaxed) }

    /// Calls `handler` once, when the buffered bytes drop below `threshold` (at once if they already are).
    public func onDrain(threshold: Int, _ handler: @escaping @Sendable () -> Void) {
        queue.async {
            if self.didClose || self.bufferedByteCount < threshold {
                handler()
            } else {
                self.drainWaiters.append((threshold, handler))
            }
        }
    }

    /// Calls `handler` once when the stream ends for any reason: the client went away, the body was finished or
    /// aborted, or the server shut down. At once if it already ended.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        queue.async {
            if self.didClose { handler() } else { self.closeHandlers.append(handler) }
        }
    }

    /// Ends the body after the queued bytes (the last chunk when chunked). The connection continues if keep-alive.
    public func finish() {
        accepting.store(false, ordering: .releasing)
        queue.async {
            guard !self.didClose else { return }
            self.finishRequested = true
            self.sink?.streamDidChange(self)
        }
    }

    /// Closes the connection without finishing the body.
    public func abort() {
        accepting.store(false, ordering: .releasing)
        queue.async {
            guard !self.didClose else { return }
            self.abortRequested = true
            if let sink = self.sink { sink.streamDidChange(self) } else { self.close() }
        }
    }

    /// True once the stream was finished, aborted or closed: further writes are dropped.
    public var isClosed: Bool { !accepting.load(ordering: .acquiring) }

    // MARK: - Connection side (on `queue`)

    /// Takes queued byte chunks, up to about `limit` bytes (at least one chunk), stopping at a file region.
    func takePending(limit: Int) -> [[UInt8]] {
        dispatchPrecondition(condition: .onQueue(queue))
        var taken: [[UInt8]] = []
        var size = 0
        while case .bytes(let chunk)? = pending.first, taken.isEmpty || size + chunk.count <= limit {
            pending.removeFirst()
            size += chunk.count
            taken.append(chunk)
        }
        return taken
    }

    /// Takes the file region queued first, if the next piece is one, cut to `limit` bytes (what is left of a
    /// declared length: a producer queuing more than it declared has the rest dropped). Nil when none or cut to 0.
    func takeFileRegion(within limit: Int64?) -> StreamFileRegion? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard case .file(var region)? = pending.first else { return nil }
        pending.removeFirst()
        if let limit, Int64(region.length) > limit {
            didSend(region.length - Int(max(limit, 0)))
            region.length = Int(max(limit, 0))
        }
        return region.length > 0 ? region : nil
    }

    var hasPending: Bool { !pending.isEmpty }

    /// Lends the socket to producers (``writeShared(_:)``): call only when everything of the body so far was sent
    /// and nothing is queued.
    func lendSocket(_ fd: Int32, chunked: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !didClose else { return }
        lane.withLock { lane in
            lane.fd = fd
            lane.chunked = chunked
        }
    }

    /// Takes the socket back before the connection writes or closes (waits for a producer's write in progress).
    /// - Returns: wire bytes producers left unsent, to go out before anything else (counted in
    ///   `bufferedByteCount` until `didSend`), and how many they sent.
    func reclaimSocket() -> (tail: [UInt8], sent: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        return lane.withLock { lane in
            defer { lane = DirectLane() }
            return (lane.tail, lane.sent)
        }
    }

    /// Finishes the body on the server's behalf (shutdown): what is queued is still sent.
    func requestFinish() {
        dispatchPrecondition(condition: .onQueue(queue))
        accepting.store(false, ordering: .releasing)
        finishRequested = true
    }

    /// `count` producer bytes reached the socket.
    func didSend(_ count: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = buffered.subtract(count, ordering: .relaxed).newValue
        guard !drainWaiters.isEmpty else { return }
        let ready = drainWaiters.filter { now < $0.threshold }
        guard !ready.isEmpty else { return }
        drainWaiters.removeAll { now < $0.threshold }
        for waiter in ready { waiter.handler() }
    }

    /// Ends the stream: drops queued bytes, fires close handlers (and pending drain handlers, so producers wake up).
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !didClose else { return }
        didClose = true
        accepting.store(false, ordering: .releasing)
        lane.withLock { $0 = DirectLane() }
        pending.removeAll()
        buffered.store(0, ordering: .relaxed)
        sink = nil
        let handlers = closeHandlers
        let waiters = drainWaiters
        closeHandlers.removeAll()
        drainWaiters.removeAll()
        for waiter in waiters { waiter.handler() }
        for handler in handlers { handler() }
    }
}
