import Dispatch
import Foundation

/// A connection of its own that `LISTEN`s on PostgreSQL notification channels (`ClusterChannel`) and hands every
/// notification to a handler: how a node hears of other nodes' commits and of commands addressed to it.
///
/// A private serial queue owns the connection, its read source and the reconnect state (checked with
/// `dispatchPrecondition`); the handler is called on that queue, one event at a time, so it must not block it.
/// The connection (`PostgresConnection`, with its keepalives) is opened and the channels listened to with the
/// blocking API on that queue; from then on it only reads, driven by a Dispatch read source on `PQsocket`
/// (`PQconsumeInput`, `PQnotifies`: never blocking). libpq owns the socket: the connection is closed in the read
/// source's cancel handler, never while the source watches it.
///
/// When the connection is lost (server restarted, network gone: noticed at the next read, or by TCP keepalives
/// within about a minute), the handler gets `.lost`, and the listener reconnects after `ReconnectSchedule`'s delays
/// until it can `LISTEN` again, then says `.listening(reconnected: true)`. Notifications sent meanwhile are lost:
/// the caller catches up from the store (`events(after:)` from its last id, its view of the jobs).
public final class PostgresListener: @unchecked Sendable {
    public enum Event: Sendable, Equatable {
        /// Listening on every channel. `reconnected`: a connection was made before and lost, so notifications
        /// may have been missed since; catch up.
        case listening(reconnected: Bool)
        /// A notification: its channel and payload.
        case notification(channel: String, payload: String)
        /// The connection failed or was lost (`JobStoreError.isUnavailable`); a new attempt follows.
        case lost(JobStoreError)
    }

    public let location: PostgresLocation
    public let channels: [String]
    private let schedule: ReconnectSchedule
    private let handler: @Sendable (Event) -> Void
    private let queue = DispatchQueue(label: "ferry.store.postgres.listener")

    // Confined to `queue`.
    private var connection: PostgresConnection?
    private var source: DispatchSourceRead?
    private var failures = 0
    private var hasListened = false
    private var started = false
    private var stopped = false
    private var whenStopped: [@Sendable () -> Void] = []

    /// - Parameters:
    ///   - channels: the channels to `LISTEN` on (e.g. `ClusterChannel.all`).
    ///   - handler: called on the listener's queue with every event, in order.
    public init(location: PostgresLocation, channels: [String], schedule: ReconnectSchedule = ReconnectSchedule(),
                handler: @escaping @Sendable (Event) -> Void) {
        self.location = location
        self.channels = channels
        self.schedule = schedule
        self.handler = handler
    }

    /// Connects and listens, in the background: the handler hears `.listening` or `.lost`. Once only.
    public func start() {
        queue.async { [self] in
            guard !started, !stopped else { return }
            started = true
            connect()
        }
    }

    /// Stops listening and closes the connection; returns once it is closed. No event follows.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                stopped = true
                if let source {
                    whenStopped.append { continuation.resume() }
                    source.cancel()
                } else {
                    connection?.close()
                    connection = nil
                    continuation.resume()
                }
            }
        }
    }

    // MARK: On the queue

    private func connect() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        do {
            let connection = try PostgresConnection(url: location.url, location: location.redacted, queue: queue)
            self.connection = connection
            for channel in channels {
                try connection.executeScript("LISTEN \(PostgresSQL.identifier(channel))", operation: "listen on \(channel)")
            }
            watch(connection)
        } catch {
            connection?.close()
            connection = nil
            let failure = error as? JobStoreError
                ?? .postgres(sqlstate: "08006", message: "\(error)", operation: "listen on \(location.redacted)")
            handler(.lost(failure))
            retry()
        }
    }

    /// Watches the connection's socket and reports that the listener listens.
    private func watch(_ connection: PostgresConnection) {
        dispatchPrecondition(condition: .onQueue(queue))
        let source = DispatchSource.makeReadSource(fileDescriptor: connection.socket, queue: queue)
        source.setEventHandler { [weak self] in self?.read() }
        source.setCancelHandler { [weak self] in self?.closed(connection) }
        self.source = source
        failures = 0
        source.resume()
        handler(.listening(reconnected: hasListened))
        hasListened = true
        drain()  // what arrived with the LISTEN answers is read already: the socket will not say so
    }

    private func read() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped, let connection else { return }
        if let failure = connection.consumeInput() {
            drain()
            handler(.lost(failure))
            source?.cancel()  // the cancel handler closes the connection and schedules the reconnect
            return
        }
        drain()
    }

    private func drain() {
        guard let connection else { return }
        while !stopped, let notification = connection.nextNotification() {
            handler(.notification(channel: notification.channel, payload: notification.payload))
        }
    }

    /// The read source's cancel handler: the one place its connection is closed.
    private func closed(_ watched: PostgresConnection) {
        dispatchPrecondition(condition: .onQueue(queue))
        watched.close()
        if connection === watched { connection = nil }
        source = nil
        if stopped {
            let waiting = whenStopped
            whenStopped = []
            waiting.forEach { $0() }
        } else {
            retry()
        }
    }

    private func retry() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        let delay = schedule.delay(afterFailures: failures)
        failures += 1
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in self?.connect() }
    }
}
