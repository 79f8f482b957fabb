import ArgumentParser
import FerryClient
import Foundation

/// `ferry get ID [-o FILE]`: downloads a finished job's file, continuing a partial local file, and checks its
/// SHA-256 against the job's.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download a finished job's file from Ferry.",
        discussion: """
            Saves to FILE, or to the job's filename in the current directory (a directory given as FILE gets \
            the job's filename inside it). A shorter local file is continued with a range request validated \
            by the file's ETag; the result is checked against the job's SHA-256.
            """
    )

    @Argument(help: "The job's id.") var id: String
    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to save the file.") var output: String?
    @Flag(help: "Print {\"path\", \"bytes\", \"resumedFrom\", \"transferred\", \"sha256\"} when done.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            if output == "-" { throw ClientError.usage("`get` writes to a file (it resumes and verifies it); give -o FILE") }
            let api = try connection.api()
            let job = try api.job(id).value
            let path = ContentDownload.destination(output: output, job: job)
            let meter = TransferMeter(name: LocalFilename.sanitize(job.filename), console: Console.standardError)
            let report = try ContentDownload(api: api, progress: meter.update).run(job: job, to: path)
            meter.finish()
            if json {
                let object: [String: Any] = [
                    "path": report.path, "bytes": report.bytes, "resumedFrom": report.resumedFrom,
                    "transferred": report.transferred, "sha256": report.sha256,
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                ClientRun.printJSON(Array(data))
            } else {
                var note = "sha256 ok"
                if report.transferred == 0 {
                    note = "already complete, " + note
                } else if report.resumedFrom > 0 {
                    note = "resumed at \(HumanUnits.bytes(report.resumedFrom)), " + note
                }
                Console.standardOutput.line(
                    "\(TerminalText.sanitized(report.path))  \(HumanUnits.bytes(report.bytes))  (\(note))")
            }
            return 0
        }
    }
}
