import ArgumentParser
import FerryClient
import Foundation

/// `ferry watch`: every job, live, until Ctrl-C. A table redrawn in place on a terminal; otherwise one line
/// per change (each job once at start, then whenever its line would read differently).
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch every job's state, progress, speed and time left, live (Ctrl-C to quit)."
    )

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let api = try connection.api()
            let console = Console.standardOutput
            let display: BoardDisplay = console.isTerminal
                ? LiveBoardDisplay(console: console, layout: .table(title: "Ferry \(api.endpoint.baseURL)"),
                                   style: Console.barStyle(environment: ProcessInfo.processInfo.environment),
                                   minimumInterval: 0.25)
                : PlainBoardDisplay(console: console)
            InterruptExit.success.install()
            try JobWatcher(api: api, display: display).run()
            return 0
        }
    }
}
