import FerryHTTP
import Synchronization

/// One WebSocket of `/jsonrpc`: its text messages are calls (one or a batch) answered in order by one task, and it
/// gets aria2's notifications from the `Aria2Notifier`. A socket opened from another site's page gets notifications
/// only once one of its calls carried a valid secret (or its handshake a valid bearer token).
///
/// Its queue of calls not yet answered is an `AsyncStream` fed from the connection's queue; a client that sends more
/// than `maxQueuedMessages` ahead of the answers is closed with 1008. Owns only that count (atomic).
final class Aria2Socket: Sendable {
    static let maxQueuedMessages = 64

    private let dispatcher: Aria2Dispatcher
    private let notifier: Aria2Notifier
    private let authorization: Aria2Authorization
    private let queued = Atomic<Int>(0)
    private let messages: AsyncStream<String>
    private let input: AsyncStream<String>.Continuation

    init(dispatcher: Aria2Dispatcher, notifier: Aria2Notifier, authorization: Aria2Authorization) {
        self.dispatcher = dispatcher
        self.notifier = notifier
        self.authorization = authorization
        (messages, input) = AsyncStream<String>.makeStream()
    }

    /// The `101` answer that opens the socket.
    func response(for request: HTTPRequest) -> HTTPResponse {
        WebSocketSession.response(for: request, onOpen: { session in self.open(session) },
                                  onText: { session, text in self.received(text, on: session) })
    }

    private func open(_ session: WebSocketSession) {
        // Notifications: a key's handshake gets its key's jobs only; a same-site socket that presented nothing gets
        // every job's (aria2 notifies every socket, and aria2p's listener sends no secret): they carry only gids.
        let entitled = !authorization.crossSite || authorization.bearer != nil
        let access = JobAccess(principal: authorization.bearer?.principal ?? .administrator)
        let key = notifier.add(session, access: entitled ? access : nil)
        let input = input
        session.stream.onClose { [notifier] in
            notifier.remove(key)
            input.finish()
        }
        Task {
            for await text in messages {
                let bytes = Array(text.utf8)
                let (_, answer) = await dispatcher.respond(to: bytes, authorization: authorization)
                queued.subtract(1, ordering: .relaxed)
                if let proven = authorization.provenAccess(in: bytes) { notifier.entitle(key, proven) }
                guard session.send(String(decoding: answer, as: UTF8.self)) else { break }
            }
        }
    }

    /// On the connection's queue.
    private func received(_ text: String, on session: WebSocketSession) {
        guard queued.add(1, ordering: .relaxed).newValue <= Self.maxQueuedMessages else {
            session.close(.policyViolation, reason: "too many calls waiting for their answers")
            return
        }
        input.yield(text)
    }
}
