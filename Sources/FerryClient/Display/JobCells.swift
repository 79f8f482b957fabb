/// What the client shows of one job, cell by cell, already formatted and safe to print. Pure.
public struct JobCells: Sendable, Equatable {
    public var id: String
    /// The state, with the reason a job waits (`waiting (retrying)`).
    public var state: String
    public var percent: String
    /// `5.2 MiB/10.0 MiB`, or the received bytes alone when the length is unknown.
    public var size: String
    /// Speed while downloading, else "".
    public var speed: String
    /// Time left while downloading, else "".
    public var eta: String
    public var name: String
    /// `code: message` of a failure or of the reason a job waits, else "".
    public var note: String
    public var fraction: Double?

    public init(_ job: Job) {
        id = TerminalText.sanitized(job.id)
        if job.state == .waiting, let error = job.error {
            state = "waiting (\(TerminalText.sanitized(error.code.rawValue)))"
        } else {
            state = job.state.description
        }
        fraction = job.fraction
        percent = HumanUnits.percent(job.fraction)
        if let expected = job.bytesExpected, job.state != .finished {
            size = HumanUnits.bytes(job.bytesReceived) + "/" + HumanUnits.bytes(expected)
        } else {
            size = HumanUnits.bytes(job.bytesReceived)
        }
        let downloading = job.state == .downloading
        speed = downloading ? HumanUnits.speed(job.speed) : ""
        eta = downloading ? HumanUnits.duration(job.eta) : ""
        name = TerminalText.sanitized(job.displayName)
        if let error = job.error {
            note = TerminalText.sanitized("\(error.code): \(error.message)")
        } else {
            note = ""
        }
    }

    /// One line for logs and pipes, fields separated by two spaces:
    /// `ID  downloading  52%  5.2 MiB/10.0 MiB  1.2 MiB/s  ETA 4s  a.bin`, with `  code: message` at the end when
    /// the job failed or waits for a reason.
    public var plainLine: String {
        var fields = [id, state, percent, size]
        if !speed.isEmpty { fields.append(speed) }
        if !eta.isEmpty { fields.append("ETA " + eta) }
        fields.append(name)
        if !note.isEmpty { fields.append(note) }
        return fields.joined(separator: "  ")
    }
}
