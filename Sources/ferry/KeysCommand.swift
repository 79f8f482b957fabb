import ArgumentParser
import FerryClient

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
    @Flag(help: "Print the API's key object.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            guard ["read", "write", "admin"].contains(scope) else {
                throw ClientError.usage("--scope must be read, write or admin (got '\(scope)')")
            }
            let made = try connection.api().createKey(NewKey(name: name, scope: scope, maxActiveJobs: maxActive, maxJobs: maxJobs))
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
