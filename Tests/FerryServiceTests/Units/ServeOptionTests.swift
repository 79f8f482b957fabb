import Foundation
import Testing
@testable import FerryService

/// `ferry serve`'s options: one table (`ServeOption.all`) that the parser, `--help` and the documents are made from.
@Suite("ferry serve's options")
struct ServeOptionTests {
    @Test func everySettingHasExactlyOneOption() {
        let described = ServeOption.all.map(\.setting)
        #expect(Set(described) == Set(ServiceConfiguration.Setting.allCases))
        #expect(described.count == Set(described).count, "a setting described twice")
        #expect(ServeOption.all.allSatisfy { !$0.summary.isEmpty && !$0.details.isEmpty })
    }

    @Test func valuesFlagsAndListsAreRead() throws {
        let values = try ServeArguments.parse([
            "--port", "9090", "--host=0.0.0.0", "--allow-private-networks",
            "--allow-network", "127.0.0.1/32", "--allow-network=10.0.0.0/8", "--port", "9091", "--log-level", "debug",
        ])
        #expect(values[.port] == "9091", "the last of a value given twice wins")
        #expect(values[.host] == "0.0.0.0")
        #expect(values[.allowPrivateNetworks] == "1")
        #expect(values[.allowNetwork] == "127.0.0.1/32,10.0.0.0/8", "a repeatable option's values joined as its variable takes them")
        #expect(values[.logLevel] == "debug")
        #expect(try ServeArguments.parse([]).isEmpty)
        #expect(try ServeArguments.parse(["--token="])[.token] == "", "an empty value given with =")
    }

    @Test func badArgumentsAreNamed() {
        func problem(_ arguments: [String]) -> String? {
            do { _ = try ServeArguments.parse(arguments); return nil } catch { return error.description }
        }
        #expect(problem(["--bogus"])?.contains("unknown option '--bogus'") == true)
        #expect(problem(["--port"]) == "--port needs a value")
        #expect(problem(["--port", "--host", "x"]) == "--port needs a value")
        #expect(problem(["--allow-private-networks=0"]) == "--allow-private-networks takes no value")
        #expect(problem(["serve"])?.contains("unexpected argument 'serve'") == true)
        #expect(problem(["-p", "1"])?.contains("unexpected argument '-p'") == true)
    }

    @Test func theLogLevelIsChecked() throws {
        #expect(try ServiceConfiguration.resolve(flags: [.logLevel: "DEBUG"], environment: [:]).logLevel == "debug")
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_LOG_LEVEL": "warning"]).logLevel == "warning")
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: [:]).logLevel == "info")
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.logLevel: "loud"], environment: [:]) }
    }

    @Test func helpNamesEveryFlagAndVariableInLinesThatFit() {
        let help = ServeOption.helpText
        for option in ServeOption.all {
            #expect(help.contains("  " + option.flag), "\(option.flag) missing from --help")
            #expect(help.contains(option.setting.environmentName), "\(option.setting.environmentName) missing from --help")
        }
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 79 || !$0.contains(" ") })
    }

    /// README.md's and docs/API.md's tables are the table's rendering: after a change to `ServeOptions.swift`,
    /// `FERRY_WRITE_DOCS=1 swift test --filter ServeOptionTests` rewrites them.
    @Test(arguments: [("README.md", ServeOption.readmeTable), ("docs/API.md", ServeOption.referenceTable)])
    func theDocumentsShowTheTable(document: String, table: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let begin = "<!-- serve-options: made from ServeOption.all; ServeOptionTests checks it -->\n", end = "\n<!-- /serve-options -->"
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            Issue.record("\(document) has no serve-options markers")
            return
        }
        let shown = String(text[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["FERRY_WRITE_DOCS"] == "1", shown != table {
            let updated = text.replacingCharacters(in: start.upperBound..<stop.lowerBound, with: table)
            try updated.write(to: root.appendingPathComponent(document), atomically: true, encoding: .utf8)
            return
        }
        #expect(shown == table, "\(document)'s table differs from ServeOption.all (FERRY_WRITE_DOCS=1 rewrites it)")
    }
}
