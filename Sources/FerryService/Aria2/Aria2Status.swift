import FerryCore
import FerryStore

/// A job as aria2's status object (`tellStatus`, `tellActive`, `tellWaiting`, `tellStopped`): aria2's field names,
/// every number a decimal string, one file with its URIs; `keys` keeps only the fields named. Pure.
struct Aria2Status {
    /// aria2's piece length, which Ferry's status objects report (`numPieces` follows from it).
    static let pieceLength: Int64 = 1_048_576

    /// The directory finished files are in (`dir`, and the start of each file's `path`).
    let directory: String

    /// aria2's status word for a Ferry state.
    static func status(_ state: JobState) -> String {
        switch state {
        case .waiting: "waiting"
        case .downloading, .delivering: "active"
        case .paused: "paused"
        case .failed: "error"
        case .finished: "complete"
        case .cancelled: "removed"
        }
    }

    /// The aria2 exit code for a failure (aria2's `errorCode`), as near as Ferry's failure codes say.
    static func errorCode(_ failure: JobFailure) -> Int {
        switch failure.code {
        case .timeout: 2
        case .httpError where failure.httpStatus == 404: 3
        case .httpError where failure.httpStatus == 401 || failure.httpStatus == 403: 24
        case .httpError: 22
        case .networkError: 6
        case .tooManyRedirects: 23
        case .checksumMismatch: 32
        case .diskFull, .quotaExceeded, .fileTooLarge: 9
        default: 1
        }
    }

    func render(_ job: JobRecord, rates: LiveRates?, keys: [String]? = nil) -> RPCValue {
        let wanted = keys.flatMap { $0.isEmpty ? nil : Set($0) }
        func wants(_ key: String) -> Bool { wanted?.contains(key) ?? true }
        let active = job.state == .downloading
        let total = job.bytesExpected ?? 0
        var fields: [String: RPCValue] = [:]
        fields.reserveCapacity(16)
        func put(_ key: String, _ value: @autoclosure () -> RPCValue) { if wants(key) { fields[key] = value() } }
        put("gid", .string(JobGID.of(job.id)))
        put("status", .string(Self.status(job.state)))
        put("totalLength", .decimal(total))
        put("completedLength", .decimal(job.bytesReceived))
        put("uploadLength", .string("0"))
        put("downloadSpeed", .decimal(active ? Int64((rates?.speed ?? 0).rounded()) : 0))
        put("uploadSpeed", .string("0"))
        put("connections", .decimal(active ? job.connections ?? 1 : 0))
        put("numPieces", .decimal(total == 0 ? 0 : (total + Self.pieceLength - 1) / Self.pieceLength))
        put("pieceLength", .decimal(Self.pieceLength))
        put("dir", .string(directory))
        if job.state == .failed {
            put("errorCode", .decimal(job.error.map(Self.errorCode) ?? 1))
            put("errorMessage", .string(job.error?.message ?? ""))
        }
        put("files", .array([file(job)]))
        return .object(fields)
    }

    /// The job's one file (`getFiles`, `files`).
    func file(_ job: JobRecord) -> RPCValue {
        .object([
            "index": .string("1"),
            "path": .string(job.filename.map { directory + "/" + $0 } ?? ""),
            "length": .decimal(job.bytesExpected ?? 0),
            "completedLength": .decimal(job.bytesReceived),
            "selected": .string("true"),
            "uris": .array(uris(job)),
        ])
    }

    /// The job's URIs (`getUris`, a file's `uris`): the URL first, then its mirrors; `used` while a source is being
    /// downloaded from, else `waiting`. Userinfo shows as `***@`, as everywhere.
    func uris(_ job: JobRecord) -> [RPCValue] {
        let active = job.state == .downloading
        var list: [(String, Bool)] = []
        if let sources = job.sources, !sources.isEmpty {
            list = sources.map { ($0.url, active && $0.isActive) }
        } else {
            list = [(job.url, active)]
        }
        return list.map { url, used in
            .object(["uri": .string(SubmittedURL.redacting(url)), "status": .string(used ? "used" : "waiting")])
        }
    }
}
