import ArgumentParser
import FerryClient
import Foundation

/// How every client subcommand ends: its body returns an exit status; a `ClientError` is printed to stderr as
/// `ferry: <message> [code, HTTP status]` and becomes the exit status.
enum ClientRun {
    static func run(_ body: () throws -> Int32) throws {
        let status: Int32
        do {
            status = try body()
        } catch let error as ClientError {
            Console.standardError.line("ferry: \(error)")
            throw ExitCode(error.exitStatus)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// Writes a JSON document the server sent (or assembled from its pieces) to stdout, with a final newline.
    /// Runs `body` for each id in turn; a refusal by the API (`ClientError.api`) is printed as `ferry: ID: message`
    /// and the next id goes on; any other error ends the run. The exit status: 1 if any id was refused, else 0.
    static func forEach(_ ids: [String], _ body: (String) throws -> Void) throws -> Int32 {
        var failed = false
        for id in ids {
            do { try body(id) } catch let error as ClientError {
                guard case .api = error else { throw error }
                failed = true
                Console.standardError.line("ferry: \(id): \(error)")
            }
        }
        return failed ? 1 : 0
    }

    static func printJSON(_ bytes: [UInt8]) {
        Console.standardOutput.line(String(decoding: bytes, as: UTF8.self))
    }

    /// `[a,b,c]` from JSON values' bytes.
    static func jsonArray(_ elements: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += element
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
