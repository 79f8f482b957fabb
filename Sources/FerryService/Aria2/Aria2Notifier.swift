import FerryHTTP
import FerryStore
import Synchronization

/// Turns the event stream (the hub's, so jobs on any node) into aria2's notifications and sends them to every open
/// WebSocket of `/jsonrpc` that is entitled to them, in the order of the events. A socket that cannot keep up is
/// disconnected by its session (`WebSocketSession.send`), never waited for.
///
/// Owns, under `state`'s lock: the last state seen of each job (forgotten when the job is removed) and the sockets.
/// `receive` runs on the hub's queue, one batch after another.
final class Aria2Notifier: Sendable {
    private struct State {
        var jobs: [String: JobState] = [:]
        var sockets: [Int: (session: WebSocketSession, entitled: Bool)] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())

    init(hub: EventHub) {
        hub.tap { [weak self] events in self?.receive(events) }
    }

    /// Adds a socket (`entitled`: notifications may go to it now); returns its key.
    func add(_ session: WebSocketSession, entitled: Bool) -> Int {
        state.withLock { state in
            state.nextKey += 1
            state.sockets[state.nextKey] = (session, entitled)
            return state.nextKey
        }
    }

    /// A cross-site socket proved it holds the secret: notifications go to it from now on.
    func entitle(_ key: Int) {
        state.withLock { state in state.sockets[key]?.entitled = true }
    }

    func remove(_ key: Int) {
        _ = state.withLock { state in state.sockets.removeValue(forKey: key) }
    }

    var socketCount: Int { state.withLock { $0.sockets.count } }

    private func receive(_ events: [ServerEvent]) {
        var messages: [String] = []
        let sessions = state.withLock { state -> [WebSocketSession] in
            for event in events {
                guard let id = event.jobID else { continue }
                switch event.kind {
                case .job:
                    guard let current = Aria2Notifications.state(inJobEvent: event.dataBytes) else { continue }
                    let previous = state.jobs.updateValue(current, forKey: id)
                    if let method = Aria2Notifications.method(from: previous, to: current) {
                        messages.append(Aria2Notifications.message(method, gid: JobGID.of(id)))
                    }
                case .removed:
                    state.jobs[id] = nil
                case .progress, .reset:
                    continue
                }
            }
            return messages.isEmpty ? [] : state.sockets.values.filter(\.entitled).map(\.session)
        }
        for session in sessions {
            for message in messages where !session.send(message) { break }
        }
    }
}
