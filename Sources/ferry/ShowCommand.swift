import ArgumentParser
import FerryClient

/// `ferry show ID`: one job's details, or its JSON.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one job.")

    @Argument(help: "The job's id.") var id: String
    @Flag(help: "Print the API's job object.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let job = try connection.api().job(id)
            if json {
                ClientRun.printJSON(job.body)
            } else {
                for line in JobDetails.lines(job.value) { Console.standardOutput.line(line) }
            }
            return 0
        }
    }
}
