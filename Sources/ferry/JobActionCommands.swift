import ArgumentParser
import FerryClient

/// What `pause`, `resume` and `cancel` share: act on each id given, print `ID state` (or the job's JSON), exit 1
/// if any action was refused (each refusal is printed with the API's message and code).
private func act(_ action: JobAction, on jobs: JobActionArguments, connection: ConnectionOptions) throws {
    let (ids, json) = (jobs.ids, jobs.json)
    try ClientRun.run {
        let api = try connection.api()
        var bodies: [[UInt8]] = []
        let status = try ClientRun.forEach(ids) { id in
            let job = try api.perform(action, on: id)
            bodies.append(job.body)
            if !json { Console.standardOutput.line(TerminalText.sanitized("\(job.value.id)  \(job.value.state)")) }
        }
        if json { ClientRun.printJSON(ids.count == 1 && bodies.count == 1 ? bodies[0] : ClientRun.jsonArray(bodies)) }
        return status
    }
}

/// The arguments of `pause`, `resume` and `cancel`: the job ids, and `--json`.
struct JobActionArguments: ParsableArguments {
    @Argument(help: "Job ids.") var ids: [String]
    @Flag(help: "Print the API's job object (an array for several ids).") var json = false
}

/// `ferry pause ID...`
struct PauseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause jobs (their bytes are kept).")
    @OptionGroup var jobs: JobActionArguments
    @OptionGroup var connection: ConnectionOptions
    func run() throws { try act(.pause, on: jobs, connection: connection) }
}

/// `ferry resume ID...`
struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume paused or failed jobs.")
    @OptionGroup var jobs: JobActionArguments
    @OptionGroup var connection: ConnectionOptions
    func run() throws { try act(.resume, on: jobs, connection: connection) }
}

/// `ferry cancel ID...`
struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel jobs for good (their partial bytes are deleted).")
    @OptionGroup var jobs: JobActionArguments
    @OptionGroup var connection: ConnectionOptions
    func run() throws { try act(.cancel, on: jobs, connection: connection) }
}

/// `ferry rm ID...`: `DELETE`, which stops a job and deletes it with its file.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete jobs and their files.", aliases: ["remove"])
    @Argument(help: "Job ids.") var ids: [String]
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let api = try connection.api()
            return try ClientRun.forEach(ids) { id in
                try api.delete(id)
                Console.standardOutput.line(TerminalText.sanitized(id) + "  removed")
            }
        }
    }
}
