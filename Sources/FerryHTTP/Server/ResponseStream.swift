import Dispatch
import Synchronization

/// A streamed response body owned by one connection's queue; every public method is safe to call from any thread.
///
/// Writes are queued and never block. `bufferedByteCount` counts bytes written by the producer and not yet handed to
/// the socket, so producers can back off with `onDrain`. State is confined to `queue` (the connection's queue), except
/// the two atomics read from any thread.
public final class ResponseStream: @unchecked Sendable {
    let queue: DispatchQueue
    weak var sink: ResponseStreamSink?

    private let buffered = Atomic<Int>(0)
    private let accepting = Atomic<Bool>(true)

    // Confined to `queue`.
    private var pending: [[UInt8]] = []
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
        queue.async { self.enqueue(bytes) }
    }

    /// Queues the same `bytes` on every stream in `streams` (fan-out): the bytes are shared, not copied, and each
    /// connection queue gets one block for all of its streams instead of one per stream. Closed or finished streams
    /// are skipped. Callable from any thread.
    public static func write(_ bytes: [UInt8], to streams: [ResponseStream]) {
        guard !bytes.isEmpty, !streams.isEmpty else { return }
        var byQueue: [ObjectIdentifier: [ResponseStream]] = [:]
        for stream in streams where stream.accepting.load(ordering: .acquiring) {
            stream.buffered.add(bytes.count, ordering: .relaxed)
            byQueue[ObjectIdentifier(stream.queue), default: []].append(stream)
        }
        for group in byQueue.values {
            group[0].queue.async {
                for stream in group { stream.enqueue(bytes) }
            }
        }
    }

    /// The connection-queue half of a write (`bytes` already counted in `buffered`).
    private func enqueue(_ bytes: [UInt8]) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !didClose, !finishRequested else {
            buffered.subtract(bytes.count, ordering: .relaxed)
            return
        }
        pending.append(bytes)
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

    /// Takes queued chunks, up to about `limit` bytes (at least one chunk).
    func takePending(limit: Int) -> [[UInt8]] {
        dispatchPrecondition(condition: .onQueue(queue))
        var taken: [[UInt8]] = []
        var size = 0
        while !pending.isEmpty && (taken.isEmpty || size + pending[0].count <= limit) {
            let chunk = pending.removeFirst()
            size += chunk.count
            taken.append(chunk)
        }
        return taken
    }

    var hasPending: Bool { !pending.isEmpty }

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
