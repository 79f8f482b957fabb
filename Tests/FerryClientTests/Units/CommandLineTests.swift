@testable import ferry
import FerryClient
import Testing

/// The subcommands' flags, parsed as the `ferry` executable parses them (no server involved).
@Suite("ferry command line")
struct CommandLineTests {
    @Test func addParsesEveryOption() throws {
        let command = try AddCommand.parse([
            "http://a/1", "http://a/2", "--priority", "3", "--connections", "4", "--paused", "-H", "A: 1",
            "--header", "B: 2", "--wait", "--json", "--server", "http://h:1", "--token", "t",
        ])
        #expect(command.urls == ["http://a/1", "http://a/2"])
        #expect(command.priority == 3)
        #expect(command.connections == 4)
        #expect(command.paused)
        #expect(command.headers == ["A: 1", "B: 2"])
        #expect(command.wait)
        #expect(command.json)
        #expect(command.connection.server == "http://h:1")
        #expect(command.connection.token == "t")
    }

    @Test func subcommandsAndAliasesAreRegistered() throws {
        for arguments in [["ls"], ["list"], ["show", "x"], ["pause", "x", "y"], ["resume", "x"], ["cancel", "x"],
                          ["rm", "x"], ["remove", "x"], ["get", "x", "-o", "f"], ["watch"], ["add", "http://a"]] {
            let command = try FerryCommand.parseAsRoot(arguments)
            #expect(!(command is ServeCommand), "\(arguments)")
        }
        #expect(try FerryCommand.parseAsRoot([]) is ServeCommand, "a bare `ferry` still serves")
    }

    @Test func listAndGetOptions() throws {
        let list = try ListCommand.parse(["--state", "failed,paused", "--json", "--page-size", "5"])
        #expect(list.state == "failed,paused")
        #expect(list.json)
        #expect(list.pageSize == 5)
        let get = try GetCommand.parse(["abc", "--output", "/tmp/x"])
        #expect(get.id == "abc")
        #expect(get.output == "/tmp/x")
    }

    @Test func missingArgumentsAreUsageErrors() {
        #expect(throws: (any Error).self) { try AddCommand.parse([]) }
        #expect(throws: (any Error).self) { try ShowCommand.parse([]) }
        #expect(throws: (any Error).self) { try PauseCommand.parse([]) }
    }
}
