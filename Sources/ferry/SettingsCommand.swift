import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry settings`: shows the running service's settings, or changes them (`PATCH /api/v1/settings`: the speed limit
/// over all downloads and how many run at once, kept across restarts).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change the speed limit over all downloads and how many run at once.",
        discussion: "Without options, shows them. A change takes effect at once for running downloads and is kept across restarts, where it wins over `ferry serve`'s flags."
    )

    @Option(name: .customLong("max-bytes-per-second"),
            help: "Speed limit over all downloads, e.g. 500K, 10MiB or 1048576 (bytes per second), or 'none' to remove it.")
    var maxBytesPerSecond: String?
    @Option(name: .customLong("max-concurrent"), help: "Downloads running at once (1 to 1024).")
    var maxConcurrent: Int?
    @Flag(help: "Print the API's settings object.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        try ClientRun.run {
            let rate = try Self.rate(maxBytesPerSecond)
            if let maxConcurrent, !(1...1024).contains(maxConcurrent) {
                throw ClientError.usage("--max-concurrent must be from 1 to 1024 (got \(maxConcurrent))")
            }
            let api = try connection.api()
            let settings = rate == nil && maxConcurrent == nil
                ? try api.settings()
                : try api.changeSettings(maxBytesPerSecond: rate, maxConcurrent: maxConcurrent)
            if json {
                ClientRun.printJSON(settings.body)
            } else {
                for line in settings.value.lines { Console.standardOutput.line(line) }
            }
            return 0
        }
    }

    /// `--max-bytes-per-second`'s text: nil when not given, `.some(nil)` for `none`, else bytes per second (sizes
    /// as `ferry serve` reads them, a trailing `/s` allowed).
    static func rate(_ text: String?) throws(ClientError) -> Int64?? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased() == "none" { return .some(nil) }
        var size = Substring(trimmed)
        if size.lowercased().hasSuffix("/s") { size = size.dropLast(2) }
        guard let bytes = ByteSize.parse(String(size)), bytes > 0 else {
            throw .usage("--max-bytes-per-second must be a speed above 0 such as 500K or 10MiB, or 'none' (got '\(text)')")
        }
        return .some(bytes)
    }
}
