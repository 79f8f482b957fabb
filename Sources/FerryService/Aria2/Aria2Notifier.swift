import FerryHTTP
import FerryStore
import Synchronization

/// Turns the event stream (the hub's, so jobs on any node) into aria2's notifications and sends them to every open
/// WebSocket of `/jsonrpc` that is entitled to them, in the order of the events, each socket only those of the jobs
/// its principal sees (`JobAccess`: a key's socket its key's jobs). A socket that cannot keep up is disconnected by its
/// session (`WebSocketSession.send`), never waited for.
///
/// Owns, under `state`'s lock: the last state seen of each job (forgotten when the job is removed) and the sockets.
/// `receive` runs on the hub's queue, one batch after another.
final class Aria2Notifier: Sendable {
    private struct State {
        var jobs: [String: JobState] = [:]
        /// Each socket and whose notifications it gets (nil: none yet).
        var sockets: [Int: (session: WebSocketSession, access: JobAccess?)] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())
    /// The key owning a job (nil: the administrator's), read from the supervisor's table.
    private let owner: @Sendable (String) -> String?

    init(hub: EventHub, owner: @escaping @Sendable (String) -> String?) {
        self.owner = owner
        hub.tap { [weak self] events in self?.receive(events) }
    }

    /// Adds a socket (`access`: whose notifications go to it now, nil for none yet); returns its key.
    func add(_ session: WebSocketSession, access: JobAccess?) -> Int {
        state.withLock { state in
            state.nextKey += 1
            state.sockets[state.nextKey] = (session, access)
            return state.nextKey
        }
    }

    /// A socket's call proved a secret: that principal's notifications go to it from now on.
    func entitle(_ key: Int, _ access: JobAccess) {
        state.withLock { state in state.sockets[key]?.access = access }
    }

    func remove(_ key: Int) {
        _ = state.withLock { state in state.sockets.removeValue(forKey: key) }
    }

    var socketCount: Int { state.withLock { $0.sockets.count } }

    /// The jobs whose last state is kept (one entry per job until its `removed` event).
    var jobCount: Int { state.withLock { $0.jobs.count } }

    private func receive(_ events: [ServerEvent]) {
        var messages: [(owner: String?, text: String)] = []
        let sockets = state.withLock { state -> [(session: WebSocketSession, access: JobAccess?)] in
            for event in events {
                guard let id = event.jobID else { continue }
                switch event.kind {
                case .job:
                    guard let current = Aria2Notifications.state(inJobEvent: event.dataBytes) else { continue }
                    let previous = state.jobs.updateValue(current, forKey: id)
                    if let method = Aria2Notifications.method(from: previous, to: current) {
                        messages.append((owner(id), Aria2Notifications.message(method, gid: JobGID.of(id))))
                    }
                case .removed:
                    state.jobs[id] = nil
                case .progress, .reset:
                    continue
                }
            }
            return messages.isEmpty ? [] : Array(state.sockets.values)
        }
        for (session, access) in sockets {
            guard let access else { continue }
            for message in messages where access.sees(owner: message.owner) {
                if !session.send(message.text) { break }
            }
        }
    }
}
