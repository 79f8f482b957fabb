@testable import ferry
import FerryClient
import Testing

/// The subcommands' flags, parsed as the `ferry` executable parses them (no server involved).
@Suite("ferry command line")
struct CommandLineTests {
    @Test func addParsesEveryOption() throws {
        let command = try AddCommand.parse([
            "http://a/1", "http://a/2", "--priority", "3", "--connections", "4", "--paused", "-H", "A: 1",
            "--header", "B: 2", "--wait", "--json", "--server", "http://h:1", "--token", "t", "--max-speed", "5MiB",
        ])
        #expect(command.urls == ["http://a/1", "http://a/2"])
        #expect(command.priority == 3)
        #expect(command.connections == 4)
        #expect(command.maxSpeed == "5MiB")
        #expect(command.paused)
        #expect(command.headers == ["A: 1", "B: 2"])
        #expect(command.wait)
        #expect(command.json)
        #expect(command.connection.server == "http://h:1")
        #expect(command.connection.token == "t")
    }

    @Test func subcommandsAndAliasesAreRegistered() throws {
        for arguments in [["ls"], ["list"], ["show", "x"], ["pause", "x", "y"], ["resume", "x"], ["cancel", "x"],
                          ["rm", "x"], ["remove", "x"], ["get", "x", "-o", "f"], ["watch"], ["add", "http://a"],
                          ["health"]] {
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

    @Test func tagAndSearchOptions() throws {
        let add = try AddCommand.parse(["http://a/1", "--tag", "x", "--tag", "two words"])
        #expect(add.tags == ["x", "two words"])
        #expect(try AddCommand.parse(["http://a/1"]).tags == [])
        let list = try ListCommand.parse(["--tag", "x", "--search", "iso"])
        #expect(list.tag == "x" && list.search == "iso")
        let short = try ListCommand.parse(["-q", "Report"])
        #expect(short.search == "Report" && short.tag == nil)
    }

    @Test func maxSpeedTakesTheServiceSizes() throws {
        #expect(try AddCommand.bytesPerSecond(nil) == nil)
        #expect(try AddCommand.bytesPerSecond("5MiB") == 5 * 1024 * 1024)
        #expect(try AddCommand.bytesPerSecond("5M") == 5_000_000)
        #expect(try AddCommand.bytesPerSecond("500K") == 500_000)
        #expect(try AddCommand.bytesPerSecond("2KiB") == 2048)
        #expect(try AddCommand.bytesPerSecond("1.5G") == 1_500_000_000)
        #expect(try AddCommand.bytesPerSecond("5MiB/s") == 5 * 1024 * 1024)
        #expect(try AddCommand.bytesPerSecond("1048576") == 1_048_576)
        for bad in ["0", "0K", "fast", "-1M", "5X", "", "/s"] {
            #expect(throws: ClientError.self, "\(bad)") { try AddCommand.bytesPerSecond(bad) }
        }
        #expect(throws: ClientError.usage(
            "--max-speed must be a speed above 0 such as 500K, 5MiB or 1048576 (bytes per second; got 'fast')")) {
            try AddCommand.bytesPerSecond("fast")
        }
    }

    /// `ferry health` reads `ferry serve`'s host and port settings, with the same rules.
    @Test func healthFindsTheServiceAsServeWouldListen() throws {
        let defaults = try HealthCommand.check(host: nil, port: nil, timeout: "2s", environment: [:])
        #expect(defaults.target.url == "http://127.0.0.1:8080/healthz")
        #expect(defaults.timeout == 2)
        // The Docker image: FERRY_HOST=0.0.0.0 and a FERRY_PORT of its own.
        let docker = try HealthCommand.check(host: nil, port: nil, timeout: "500ms",
                                             environment: ["FERRY_HOST": "0.0.0.0", "FERRY_PORT": "9090"])
        #expect(docker.target.url == "http://127.0.0.1:9090/healthz")
        #expect(docker.timeout == 0.5)
        // A flag wins over its variable; an empty variable counts as absent, as for serve.
        let flags = try HealthCommand.check(host: "::", port: "7000", timeout: "1s",
                                            environment: ["FERRY_HOST": "0.0.0.0", "FERRY_PORT": ""])
        #expect(flags.target.url == "http://[::1]:7000/healthz")
        // Settings that are not the probe's do not stop it.
        let other = try HealthCommand.check(host: nil, port: nil, timeout: "2s",
                                            environment: ["FERRY_RETENTION": "never", "FERRY_MAX_CONCURRENT": "0"])
        #expect(other.target.port == 8080)
    }

    @Test func healthRefusesWhatServeWouldRefuse() {
        #expect(throws: ClientError.usage("invalid value 'http' for FERRY_PORT: expected a port number from 0 to 65535")) {
            try HealthCommand.check(host: nil, port: nil, timeout: "2s", environment: ["FERRY_PORT": "http"])
        }
        #expect(throws: ClientError.self) { try HealthCommand.check(host: nil, port: "70000", timeout: "2s", environment: [:]) }
        #expect(throws: ClientError.self) { try HealthCommand.check(host: nil, port: "0", timeout: "2s", environment: [:]) }
        #expect(throws: ClientError.self) { try HealthCommand.check(host: nil, port: nil, timeout: "0s", environment: [:]) }
        #expect(throws: ClientError.self) { try HealthCommand.check(host: nil, port: nil, timeout: "soon", environment: [:]) }
    }

    @Test func missingArgumentsAreUsageErrors() {
        #expect(throws: (any Error).self) { try AddCommand.parse([]) }
        #expect(throws: (any Error).self) { try ShowCommand.parse([]) }
        #expect(throws: (any Error).self) { try PauseCommand.parse([]) }
    }
}
