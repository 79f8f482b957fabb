import Foundation

/// The notification channels the nodes of one cluster share (PostgreSQL `LISTEN`/`NOTIFY`), and what their payloads
/// say. Pure values: the store sends these inside its transactions (delivered only on commit), `PostgresListener`
/// hands them to the service, which decodes them here.
///
/// - `ferry_events`: the highest event id a commit appended (decimal): read `events(after:)` from your last id.
/// - `ferry_jobs`: ids of jobs a commit inserted, changed, released or deleted, comma-separated; a commit touching
///   more than fit in one payload sends several. Ids are Ferry's (no commas).
/// - `ferry_commands`: a command for one node, `<node id>\n<command>`; every node listens and keeps its own.
/// - `ferry_progress`: the latest `progress` events of jobs one node runs, `<node id>` then one event's JSON per line
///   (JSON on one line names its job, `"id"`); each node sends at most one a second per job, batched.
/// - `ferry_sessions`: a page session ended on some node, `<nonce> <expiry, Unix milliseconds>`; or `*`: the
///   session secret was replaced (every session ended), read it again.
/// - `ferry_keys`: the id of an API key made, changed or revoked on some node: read it again (gone: revoked).
public enum ClusterChannel {
    public static let events = "ferry_events"
    public static let jobs = "ferry_jobs"
    public static let commands = "ferry_commands"
    public static let progress = "ferry_progress"
    public static let sessions = "ferry_sessions"
    public static let keys = "ferry_keys"
    /// Every channel a node listens to.
    public static let all = [events, jobs, commands, progress, sessions, keys]

    /// PostgreSQL refuses payloads of 8,000 bytes or more; a little under it.
    static let payloadLimit = 7_900
    /// The longest command line (with its node id) one notification carries.
    public static let commandLimit = payloadLimit

    /// The `ferry_jobs` payloads naming `ids`, each under `payloadLimit` bytes; none for no ids.
    public static func jobPayloads<S: Sequence<String>>(_ ids: S) -> [String] {
        var payloads: [String] = []
        var current = ""
        for id in ids {
            if !current.isEmpty, current.utf8.count + 1 + id.utf8.count > payloadLimit {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? id : "," + id
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// The job ids of a `ferry_jobs` payload.
    public static func jobIDs(inPayload payload: String) -> [String] {
        payload.split(separator: ",").map(String.init)
    }

    /// The `ferry_commands` payload carrying `command` to `node`. A node id never holds a line break.
    public static func commandPayload(_ command: String, to node: String) -> String {
        precondition(!node.contains("\n"), "a node id holds a line break")
        return node + "\n" + command
    }

    /// Whether `command` for `node` fits in one notification.
    public static func fits(_ command: String, to node: String) -> Bool {
        node.utf8.count + 1 + command.utf8.count <= payloadLimit
    }

    /// The command of a `ferry_commands` payload when it is addressed to `node`; nil for another node's.
    public static func command(inPayload payload: String, for node: String) -> String? {
        guard let newline = payload.firstIndex(of: "\n"), payload[..<newline] == node else { return nil }
        return String(payload[payload.index(after: newline)...])
    }

    /// The `ferry_progress` payloads carrying `events` (each one line of JSON) from `node`, each under `payloadLimit`
    /// bytes; an event too long for one payload is left out (a progress event is a few hundred bytes).
    public static func progressPayloads(from node: String, _ events: [[UInt8]]) -> [String] {
        precondition(!node.contains("\n"), "a node id holds a line break")
        var payloads: [String] = []
        var current = node
        for event in events where !event.contains(UInt8(ascii: "\n")) {
            guard node.utf8.count + 1 + event.count <= payloadLimit else { continue }
            if current.utf8.count + 1 + event.count > payloadLimit {
                payloads.append(current)
                current = node
            }
            current += "\n" + String(decoding: event, as: UTF8.self)
        }
        if current.utf8.count > node.utf8.count { payloads.append(current) }
        return payloads
    }

    /// The sending node and the events of a `ferry_progress` payload; nil for one without a node.
    public static func progress(inPayload payload: String) -> (node: String, events: [[UInt8]])? {
        let lines = payload.split(separator: "\n", omittingEmptySubsequences: false)
        guard let node = lines.first, !node.isEmpty else { return nil }
        return (String(node), lines.dropFirst().filter { !$0.isEmpty }.map { Array($0.utf8) })
    }

    /// The `ferry_sessions` payload of a page session that ended (its cookie's nonce and expiry).
    public static func sessionPayload(nonce: String, expiresAt: Date) -> String {
        "\(nonce) \(StoredDate.milliseconds(expiresAt))"
    }

    /// The `ferry_sessions` payload saying the session secret was replaced.
    public static let secretReplaced = "*"

    /// The session a `ferry_sessions` payload ended; nil for `secretReplaced` or anything else.
    public static func session(inPayload payload: String) -> (nonce: String, expiresAt: Date)? {
        let parts = payload.split(separator: " ")
        guard parts.count == 2, let milliseconds = Int64(parts[1]) else { return nil }
        return (String(parts[0]), StoredDate.date(milliseconds: milliseconds))
    }
}
