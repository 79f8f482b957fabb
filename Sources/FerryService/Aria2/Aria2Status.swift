import FerryCore
import FerryStore

/// A job as aria2's status object (`tellStatus`, `tellActive`, `tellWaiting`, `tellStopped`): aria2's field names,
/// every number a decimal string, one file with its URIs; `keys` keeps only the fields named (`Aria2StatusFields`).
/// Written straight to JSON, as aria2 writes it. Pure.
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

    /// The status object of `job` (`tellStatus`), already written (`RPCValue.json`).
    func render(_ job: JobRecord, rates: LiveRates?, keys: [String]? = nil) -> RPCValue {
        var json = JSONWriter(capacity: 256)
        write(job, gid: JobGID.of(job.id), rates: rates, fields: Aria2StatusFields(keys: keys), into: &json)
        return .json(json.bytes)
    }

    /// Writes the status object of `job` (whose gid is `gid`) with the `fields` asked for, in aria2's order (its keys
    /// sorted), straight from the record: a list of a thousand jobs makes no intermediate values.
    func write(_ job: JobRecord, gid: String, rates: LiveRates?, fields: Aria2StatusFields, into json: inout JSONWriter) {
        let active = job.state == .downloading
        let total = job.bytesExpected ?? 0
        json.beginObject()
        if fields.contains(.completedLength) { json.decimal("completedLength", job.bytesReceived) }
        if fields.contains(.connections) { json.decimal("connections", Int64(active ? job.connections ?? 1 : 0)) }
        if fields.contains(.dir) { json.field("dir", directory) }
        if fields.contains(.downloadSpeed) {
            json.decimal("downloadSpeed", active ? Int64((rates?.speed ?? 0).rounded()) : 0)
        }
        if job.state == .failed {
            if fields.contains(.errorCode) { json.decimal("errorCode", Int64(job.error.map(Self.errorCode) ?? 1)) }
            if fields.contains(.errorMessage) { json.field("errorMessage", job.error?.message ?? "") }
        }
        if fields.contains(.files) {
            json.key("files")
            RPCValue.array([file(job)]).write(into: &json)
        }
        if fields.contains(.gid) { json.field("gid", gid) }
        if fields.contains(.numPieces) {
            json.decimal("numPieces", total == 0 ? 0 : (total + Self.pieceLength - 1) / Self.pieceLength)
        }
        if fields.contains(.pieceLength) { json.decimal("pieceLength", Self.pieceLength) }
        if fields.contains(.status) { json.field("status", Self.status(job.state)) }
        if fields.contains(.totalLength) { json.decimal("totalLength", total) }
        if fields.contains(.uploadLength) { json.field("uploadLength", "0") }
        if fields.contains(.uploadSpeed) { json.field("uploadSpeed", "0") }
        json.endObject()
    }

    /// Writes the status objects of the `entries` at `positions`, in that order, as one array (`tellActive`,
    /// `tellWaiting`, `tellStopped`): an entry's object already written is copied in, the others are written from
    /// their records. Returns the array and the objects it wrote of jobs not downloading, for `Aria2StatusCache`.
    func write(_ entries: [Aria2Jobs.Entry], at positions: [Int], fields: Aria2StatusFields)
        -> (list: RPCValue, written: [(gid: UInt64, fragment: Aria2StatusCache.Fragment)])
    {
        var json = JSONWriter(capacity: 64 + positions.count * (fields == .all ? 640 : 224))
        var written: [(gid: UInt64, fragment: Aria2StatusCache.Fragment)] = []
        json.beginArray()
        for index in positions {
            let listing = entries[index].listing
            switch entries[index].content {
            case .written(let bytes):
                json.raw(bytes)
            case .record(let job, let rates):
                var one = JSONWriter(capacity: fields == .all ? 640 : 224)
                write(job, gid: JobGID.text(listing.gid), rates: rates, fields: fields, into: &one)
                json.raw(one.bytes)
                guard listing.state != .downloading else { continue }
                written.append((listing.gid, .init(version: listing.version, fields: fields, bytes: one.bytes)))
            }
        }
        json.endArray()
        return (.json(json.bytes), written)
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

private extension JSONWriter {
    /// A field whose value is a number as aria2 sends every number: a decimal string.
    mutating func decimal(_ name: String, _ value: Int64) {
        key(name)
        string(String(value))
    }
}
