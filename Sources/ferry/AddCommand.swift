import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry add URL...`: submits one job (a single object) or several (a JSON array), prints their ids, and with
/// `--wait` follows them to the end with a progress bar per job.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add downloads to a running Ferry.",
        discussion: """
            Prints the new jobs' ids, one per line (--json: the API's answer). With --wait, shows each job's \
            progress until all have ended and exits 0 only if every one finished (1 if any failed or was \
            cancelled, 130 when interrupted). With --deliver-to, Ferry uploads each finished file onward and a \
            job finishes only once delivered: --wait shows the download bar, then the upload bar.
            """
    )

    @Argument(help: "The URLs to download: http, https, ftp, ftps or sftp.") var urls: [String]
    @Option(help: "Name for the file (one URL only).") var filename: String?
    @Option(help: "Expected SHA-256 of the file, 64 hex digits (one URL only).") var sha256: String?
    @Option(help: ArgumentHelp("Expected digest of the file as ALGORITHM:HEX, ALGORITHM one of sha-256, sha-512, sha-1, md5 (one URL only).",
                               valueName: "algorithm:hex"))
    var checksum: String?
    @Option(help: "Priority: higher starts first (default 0).") var priority: Int?
    @Option(name: .customLong("max-speed"),
            help: "Speed limit per job, bytes per second: 500K, 5MiB, 1.5M (K/M/G = 1000s, KiB/MiB/GiB = 1024s).")
    var maxSpeed: String?
    @Option(help: "Parallel range connections for one file, 1-16.") var connections: Int?
    @Flag(help: "Create the jobs paused.") var paused = false
    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header for the origin, 'Name: value' (repeatable).")
    var headers: [String] = []
    @Option(name: .customLong("tag"), help: "A tag for the jobs, to find them by (ferry ls --tag); repeatable, at most 16.")
    var tags: [String] = []
    @Option(name: .customLong("mirror"), help: "Another URL for the same file (one URL only): segments are spread over all of them; repeatable, at most 15.")
    var mirrors: [String] = []
    @Option(name: .customLong("deliver-to"),
            help: "Upload each finished file to this http(s) URL (a presigned URL, a WebDAV path, an upload endpoint).")
    var deliverTo: String?
    @Option(help: "The delivery's method: PUT (the file as the body, the default) or POST (multipart/form-data).")
    var method: String?
    @Option(help: "With --method POST: the name of the file's part (default file).") var field: String?
    @Option(name: .customLong("form-field"), help: "With --method POST: a text part sent before the file, key=value (repeatable).")
    var formFields: [String] = []
    @Option(name: .customLong("delivery-header"), help: "A request header for the delivery target, 'Name: value' (repeatable).")
    var deliveryHeaders: [String] = []
    @Flag(name: .customLong("delete-after"), help: "Remove Ferry's copy once the file is delivered.") var deleteAfter = false
    @Flag(help: "Show progress until every job has ended (with --deliver-to: downloaded and delivered); the exit status says whether all finished.")
    var wait = false
    @Flag(help: "Print JSON for scripts: the API's answer, or with --wait the final jobs.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            var arguments = AddArguments(urls: urls, filename: filename, sha256: sha256, checksum: checksum, priority: priority,
                                         maxBytesPerSecond: try Self.bytesPerSecond(maxSpeed), connections: connections,
                                         paused: paused, headers: headers, tags: tags, deliverTo: deliverTo,
                                         deliveryMethod: method, deliveryField: field, formFields: formFields,
                                         deliveryHeaders: deliveryHeaders, deleteAfter: deleteAfter)
            arguments.mirrors = mirrors
            let submission = try arguments.submission()
            let api = try connection.api()
            let answer = try api.submit(submission)
            var ids: [String] = []
            var refused = false
            for (index, item) in answer.value.enumerated() {
                switch item {
                case .job(let job):
                    ids.append(job.id)
                    if !json { Console.standardOutput.line(job.id) }
                case .refused(let code, let message):
                    refused = true
                    let url = submission.items[index].url
                    Console.standardError.line("ferry: \(TerminalText.sanitized(url)): \(message) [\(code)]")
                }
            }
            guard wait else {
                if json { ClientRun.printJSON(answer.body) }
                return refused ? 1 : 0
            }
            InterruptExit.interrupted.install()
            let board = try JobWaiter(api: api, ids: ids, display: Self.display(json: json)).run()
            for job in board.jobs where job.state != .finished {
                let reason = job.error.map { error in
                    ": \(error.message) [\(error.code)\(error.httpStatus.map { ", HTTP \($0)" } ?? "")]"
                } ?? ""
                Console.standardError.line("ferry: \(job.id) (\(TerminalText.sanitized(job.displayName))) \(job.state)\(reason)")
            }
            for id in board.removedIDs { Console.standardError.line("ferry: \(id) was removed") }
            if json {
                var bodies: [[UInt8]] = []
                for id in ids where !board.removedIDs.contains(id) { bodies.append(try api.job(id).body) }
                if case .single = submission, let only = bodies.first {
                    ClientRun.printJSON(only)
                } else {
                    ClientRun.printJSON(ClientRun.jsonArray(bodies))
                }
            }
            return !refused && board.allFinished ? 0 : 1
        }
    }

    /// `--max-speed`'s text as bytes per second, or nil when not given. Sizes are `ferry serve`'s (`ByteSize`:
    /// `K`/`M`/`G` are powers of 1000, `KiB`/`MiB`/`GiB` of 1024, fractions allowed); a trailing `/s` is
    /// allowed too (`5MiB/s`).
    /// - Throws: `.usage` for text that is not a size, or a size of 0 bytes.
    static func bytesPerSecond(_ text: String?) throws(ClientError) -> Int64? {
        guard let text else { return nil }
        var size = Substring(text.trimmingCharacters(in: .whitespaces))
        if size.lowercased().hasSuffix("/s") { size = size.dropLast(2) }
        guard let bytes = ByteSize.parse(String(size)), bytes > 0 else {
            throw .usage("--max-speed must be a speed above 0 such as 500K, 5MiB or 1048576 (bytes per second; got '\(text)')")
        }
        return bytes
    }

    /// Live bars on a terminal; plain lines otherwise. With --json, stdout carries only the JSON, so progress
    /// goes to stderr, and only when stderr is a terminal.
    static func display(json: Bool) -> BoardDisplay {
        let environment = ProcessInfo.processInfo.environment
        let console = json ? Console.standardError : Console.standardOutput
        if console.isTerminal {
            return LiveBoardDisplay(console: console, layout: .progressLines, style: Console.barStyle(environment: environment))
        }
        return json ? SilentBoardDisplay() : PlainBoardDisplay(console: console)
    }
}
