import ArgumentParser
import FerryClient
import Foundation

/// `ferry ls`: every job (all pages), as a table or, with `--json`, `{"jobs": [...]}` as the server sent them.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the jobs of a running Ferry, oldest first.",
        aliases: ["list"]
    )

    @Option(help: "Only jobs in these states, a comma list (waiting,downloading,delivering,paused,finished,failed,cancelled).")
    var state: String?
    @Option(help: "Only jobs carrying this tag (exactly).") var tag: String?
    @Option(name: [.customShort("q"), .customLong("search")],
            help: "Only jobs whose filename or URL contains this text, in any case.")
    var search: String?
    @Flag(help: "Print {\"jobs\": [...]} with the API's job objects.") var json = false
    @Option(name: .customLong("page-size"), help: ArgumentHelp("Jobs asked for per request.", visibility: .hidden))
    var pageSize = 1000
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let page = try connection.api().allJobs(states: state, tag: tag, search: search, pageSize: pageSize)
            if json {
                ClientRun.printJSON(Array(#"{"jobs":"#.utf8) + ClientRun.jsonArray(page.rawJobs) + [UInt8(ascii: "}")])
                return 0
            }
            let console = Console.standardOutput
            guard !page.jobs.isEmpty else {
                if console.isTerminal { Console.standardError.line("no jobs") }
                return 0
            }
            let table = JobTable(width: console.isTerminal ? console.columns : nil)
            for line in table.render(page.jobs) { console.line(line) }
            return 0
        }
    }
}
