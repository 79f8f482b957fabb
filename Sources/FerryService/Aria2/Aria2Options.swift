import FerryStore
import Foundation

/// aria2's option names mapped onto Ferry's job fields and settings (API.md, "aria2 JSON-RPC"). Option values are
/// strings as aria2 takes them (numbers also accepted); a value Ferry cannot use is aria2's "problem while processing
/// the option" error; options Ferry has no use for (`dir` among them) are accepted and ignored. Pure.
enum Aria2Options {
    /// The body of `POST /api/v1/jobs` for `aria2.addUri(uris, options)`: the first URI is `url`, the rest `mirrors`.
    static func jobBody(uris: [String], options: [String: RPCValue]) throws(Aria2Error) -> JobDraft.Body {
        guard let first = uris.first else { throw Aria2Error("URI is not provided.") }
        var body = JobDraft.Body()
        body.url = first
        if uris.count > 1 { body.mirrors = Array(uris.dropFirst()) }
        for (name, value) in options {
            switch name {
            case "out": body.filename = try text(name, value)
            case "header": body.headers = try headers(value)
            case "max-download-limit": body.maxBytesPerSecond = try rate(name, value)
            case "split", "max-connection-per-server":
                let count = try number(name, value, in: 1...Int64.max)
                // Both say how many connections; the larger one given is taken, at most Ferry's 16.
                body.connections = max(body.connections ?? 1, Int(min(count, 16)))
            case "checksum": body.checksum = try checksum(value)
            case "pause": body.paused = try flag(name, value)
            default: continue
            }
        }
        return body
    }

    /// `max-download-limit` for `changeOption`: `.some(nil)` removes the limit; nil when not given.
    static func rateChange(_ options: [String: RPCValue]) throws(Aria2Error) -> Int64?? {
        guard let value = options["max-download-limit"] else { return nil }
        return .some(try rate("max-download-limit", value))
    }

    /// A job's options (`getOption`).
    static func of(_ job: JobRecord, directory: String) -> RPCValue {
        var options: [String: RPCValue] = [
            "dir": .string(directory),
            "max-download-limit": .decimal(job.maxBytesPerSecond ?? 0),
            "split": .decimal(job.connections ?? 1),
            "max-connection-per-server": .decimal(job.connections ?? 1),
            "pause": .string(job.state == .paused ? "true" : "false"),
        ]
        if let filename = job.filename ?? job.requestedFilename { options["out"] = .string(filename) }
        if let checksum = job.checksum { options["checksum"] = .string("\(checksum.algorithm.rawValue)=\(checksum.value)") }
        return .object(options)
    }

    /// The service's settings as aria2's global options (`getGlobalOption`).
    static func global(maxBytesPerSecond: Int64?, maxConcurrent: Int, directory: String) -> RPCValue {
        .object([
            "dir": .string(directory),
            "max-overall-download-limit": .decimal(maxBytesPerSecond ?? 0),
            "max-concurrent-downloads": .decimal(maxConcurrent),
            "max-overall-upload-limit": .string("0"),
            "max-download-limit": .string("0"),
            "split": .string("1"),
            "max-connection-per-server": .string("1"),
            "continue": .string("true"),
        ])
    }

    /// `changeGlobalOption`: the settings change asked for (`max-overall-download-limit`, `max-concurrent-downloads`;
    /// anything else ignored); nil when it asks none.
    static func settingsChange(_ options: [String: RPCValue], range: ClosedRange<Int>) throws(Aria2Error) -> StoredSettings? {
        var change = StoredSettings(maxBytesPerSecond: nil, maxConcurrent: nil)
        if let value = options["max-overall-download-limit"] {
            change.maxBytesPerSecond = .some(try rate("max-overall-download-limit", value))
        }
        if let value = options["max-concurrent-downloads"] {
            let bounds = Int64(range.lowerBound)...Int64(range.upperBound)
            change.maxConcurrent = Int(try number("max-concurrent-downloads", value, in: bounds))
        }
        return change.isEmpty ? nil : change
    }

    // MARK: Values

    private static func text(_ name: String, _ value: RPCValue) throws(Aria2Error) -> String {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        default: throw .option(name)
        }
    }

    /// A size as aria2 writes one: digits with an optional `K` or `M` (1024, 1048576); `0` is no limit (nil).
    static func rate(_ name: String, _ value: RPCValue) throws(Aria2Error) -> Int64? {
        var digits = try text(name, value).trimmingCharacters(in: .whitespaces)
        var unit: Int64 = 1
        if let last = digits.last, "KkMm".contains(last) {
            unit = last == "K" || last == "k" ? 1024 : 1_048_576
            digits.removeLast()
        }
        guard let number = Int64(digits), number >= 0, number <= Int64.max / unit else { throw .option(name) }
        return number == 0 ? nil : number * unit
    }

    private static func number(_ name: String, _ value: RPCValue, in range: ClosedRange<Int64>) throws(Aria2Error) -> Int64 {
        guard let number = Int64(try text(name, value)), range.contains(number) else { throw .option(name) }
        return number
    }

    private static func flag(_ name: String, _ value: RPCValue) throws(Aria2Error) -> Bool {
        if case .bool(let flag) = value { return flag }
        switch try text(name, value) {
        case "true": return true
        case "false": return false
        default: throw .option(name)
        }
    }

    /// `header`: one `"Name: value"` or an array of them.
    private static func headers(_ value: RPCValue) throws(Aria2Error) -> [String: String] {
        let lines: [RPCValue] = value.array ?? [value]
        var headers: [String: String] = [:]
        for line in lines {
            let text = try text("header", line)
            guard let colon = text.firstIndex(of: ":") else { throw .option("header") }
            let name = text[..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw .option("header") }
            headers[name] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    /// `checksum`: `<algorithm>=<hex>` with aria2's algorithm names (`sha-256`, `sha-1`, `sha-512`, `md5`).
    private static func checksum(_ value: RPCValue) throws(Aria2Error) -> JobDraft.ChecksumBody {
        let text = try text("checksum", value)
        guard let equals = text.firstIndex(of: "=") else { throw .option("checksum") }
        return JobDraft.ChecksumBody(algorithm: String(text[..<equals]), value: String(text[text.index(after: equals)...]))
    }
}
