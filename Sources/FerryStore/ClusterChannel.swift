/// The notification channels the nodes of one cluster share (PostgreSQL `LISTEN`/`NOTIFY`), and what their payloads
/// say. Pure values: the store sends these inside its transactions (delivered only on commit), `PostgresListener`
/// hands them to the service, which decodes them here.
///
/// - `ferry_events`: the highest event id a commit appended (decimal): read `events(after:)` from your last id.
/// - `ferry_jobs`: ids of jobs a commit inserted, changed, released or deleted, comma-separated; a commit touching
///   more than fit in one payload sends several. Ids are Ferry's (no commas).
/// - `ferry_commands`: a command for one node, `<node id>\n<command>`; every node listens and keeps its own.
public enum ClusterChannel {
    public static let events = "ferry_events"
    public static let jobs = "ferry_jobs"
    public static let commands = "ferry_commands"
    /// Every channel a node listens to.
    public static let all = [events, jobs, commands]

    /// PostgreSQL refuses payloads of 8,000 bytes or more; a little under it.
    static let payloadLimit = 7_900

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

    /// The command of a `ferry_commands` payload when it is addressed to `node`; nil for another node's.
    public static func command(inPayload payload: String, for node: String) -> String? {
        guard let newline = payload.firstIndex(of: "\n"), payload[..<newline] == node else { return nil }
        return String(payload[payload.index(after: newline)...])
    }
}
