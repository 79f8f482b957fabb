import ArgumentParser
import FerryService

/// The `ferry` executable: `serve` (the default) runs the service; the other subcommands talk to one.
@main
struct FerryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "A server-side download proxy: fetch files on the server's link, resume, verify, serve.",
        subcommands: [ServeCommand.self, AddCommand.self, ListCommand.self, ShowCommand.self, PauseCommand.self, ResumeCommand.self, CancelCommand.self, RemoveCommand.self, GetCommand.self, WatchCommand.self, HealthCommand.self, SettingsCommand.self, KeysCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
