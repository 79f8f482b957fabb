import ArgumentParser
import FerryClient
import FerryCore

/// `ferry keys add|ls|rm`: API keys for the clients that share one Ferry (API.md, "API keys"); needs the
/// administrator's token (or an admin key) in `FERRY_TOKEN` / `--token`.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Make, list and revoke API keys (administrator only).",
        subcommands: [KeysAddCommand.self, KeysListCommand.self, KeysRemoveCommand.self])
}

/// `ferry keys add NAME --scope write --max-active 4`: prints the id and the token (shown this once).
struct KeysAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Make a key; its token is printed this once.")
    @Argument(help: "The key's name (1 to 64 characters), shown as the key of its jobs.") var name: String
    @Option(help: "read, write or admin.") var scope = "write"
    @Option(name: .customLong("max-active"), help: "Jobs of this key running at once; more wait.") var maxActive: Int64?
    @Option(name: .customLong("max-jobs"), help: "Jobs this key may hold; more are refused.") var maxJobs: Int64?
    @Option(name: .customLong("max-bytes-per-second"), help: "Speed of all this key's downloads together, e.g. 10MiB.")
    var maxBytesPerSecond: String?
    @Option(name: .customLong("bytes-per-day"), help: "Bytes this key may fetch in a rolling 24 hours, e.g. 50GiB.")
    var bytesPerDay: String?
    @Option(name: .customLong("spool-bytes"), help: "Bytes this key's files may hold in the spool, e.g. 20GiB.")
    var spoolBytes: String?
    @Flag(help: "Print the API's key object.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            guard ["read", "write", "admin"].contains(scope) else {
                throw ClientError.usage("--scope must be read, write or admin (got '\(scope)')")
            }
            let limits = APIKey.Limits(
                maxActiveJobs: maxActive, maxJobs: maxJobs,
                maxBytesPerSecond: try Self.size(maxBytesPerSecond, "--max-bytes-per-second", allowing: "/s"),
                bytesPerDay: try Self.size(bytesPerDay, "--bytes-per-day"), spoolBytes: try Self.size(spoolBytes, "--spool-bytes"))
            let made = try connection.api().createKey(NewKey(name: name, scope: scope, limits: limits))
            if json {
                ClientRun.printJSON(made.body)
            } else {
                Console.standardOutput.line(TerminalText.sanitized(made.value.line))
                Console.standardOutput.line("token  \(made.value.token ?? "")")
                Console.standardError.line("ferry: keep the token now: it is not shown again")
            }
            return 0
        }
    }
}

extension KeysAddCommand {
    /// A size option's bytes (as `ferry serve` reads sizes: `500K`, `10MiB`), nil when not given; `suffix` may end it.
    static func size(_ text: String?, _ option: String, allowing suffix: String? = nil) throws(ClientError) -> Int64? {
        guard let text else { return nil }
        var size = Substring(text.trimmingCharacters(in: .whitespaces))
        if let suffix, size.lowercased().hasSuffix(suffix) { size = size.dropLast(suffix.count) }
        guard let bytes = ByteSize.parse(String(size)), bytes >= 0 else {
            throw .usage("\(option) must be a size such as 500K, 10MiB or 1GiB (got '\(text)')")
        }
        return bytes
    }
}

/// `ferry keys ls`: one line per key, oldest first.
struct KeysListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the keys.", aliases: ["list"])
    @Flag(help: "Print the API's answer.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let keys = try connection.api().keys()
            if json {
                ClientRun.printJSON(keys.body)
            } else {
                for key in keys.value { Console.standardOutput.line(TerminalText.sanitized(key.line)) }
            }
            return 0
        }
    }
}

/// `ferry keys rm ID...`: revokes each at once.
struct KeysRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Revoke keys at once.", aliases: ["remove"])
    @Argument(help: "Key ids.") var ids: [String]
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let api = try connection.api()
            return try ClientRun.forEach(ids) { try api.revokeKey($0) }
        }
    }
}
