/// What the client shows of one job, cell by cell, already formatted and safe to print. Pure.
///
/// A job with an onward delivery has two parts: its download and its upload. `.whole` (tables and plain lines)
/// shows whichever is running: while `delivering`, the percentage, size (`sent 5.2 MiB/10.0 MiB`), speed and time
/// left are the upload's. `.download` and `.upload` show one part each, for `add --wait`'s two bars.
public struct JobCells: Sendable, Equatable {
    /// Which part of a job the cells describe.
    public enum Part: Sendable, Equatable {
        case whole, download, upload
    }

    public var id: String
    /// The state, with the reason a job waits (`waiting (retrying)`); for `.upload`, the delivery's state.
    public var state: String
    public var percent: String
    /// `5.2 MiB/10.0 MiB`, or the received bytes alone when the length is unknown; `sent …` for an upload.
    public var size: String
    /// Speed while downloading (or sending), else "".
    public var speed: String
    /// Time left while downloading (or sending), else "".
    public var eta: String
    /// The file's name; for `.upload`, `to HOST`.
    public var name: String
    /// `code: message` of a failure or of the reason a job waits, else "".
    public var note: String
    /// For a job with a delivery: `to HOST`, or `delivered to HOST` once delivered; else "".
    public var target: String
    public var fraction: Double?

    public init(_ job: Job, part: Part = .whole) {
        id = TerminalText.sanitized(job.id)
        let delivery = job.delivery
        target = delivery.map { TerminalText.sanitized(($0.state == "delivered" ? "delivered to " : "to ") + $0.host) } ?? ""
        name = TerminalText.sanitized(job.displayName)
        note = job.error.map { TerminalText.sanitized("\($0.code): \($0.message)") } ?? ""
        let uploadShown = delivery != nil && (part == .upload || (part == .whole && job.state == .delivering))
        if uploadShown, let delivery {
            state = part == .upload ? delivery.state : job.state.description
            if job.state == .delivering, let error = job.error { state += " (\(TerminalText.sanitized(error.code.rawValue)))" }
            fraction = delivery.fraction
            percent = HumanUnits.percent(fraction)
            if let total = delivery.bytesTotal, delivery.state != "delivered" {
                size = "sent " + HumanUnits.bytes(delivery.bytesSent) + "/" + HumanUnits.bytes(total)
            } else {
                size = "sent " + HumanUnits.bytes(delivery.bytesSent)
            }
            let sending = delivery.isSending && job.state == .delivering
            speed = sending ? HumanUnits.speed(delivery.speed) : ""
            eta = sending ? HumanUnits.duration(delivery.eta) : ""
            if part == .upload {
                name = TerminalText.sanitized("to " + delivery.host)
                if let error = delivery.error ?? (job.state == .failed && Self.deliveryFailed(job) ? job.error : nil) {
                    note = TerminalText.sanitized("\(error.code): \(error.message)")
                } else if job.state != .delivering {
                    note = ""
                }
            }
            return
        }
        let complete = delivery != nil && (job.state == .delivering || job.state == .finished || Self.deliveryFailed(job))
        let downloaded = part == .download && complete
        if job.state == .waiting, let error = job.error {
            state = "waiting (\(TerminalText.sanitized(error.code.rawValue)))"
        } else {
            state = downloaded ? "downloaded" : job.state.description
        }
        fraction = downloaded ? 1 : job.fraction
        percent = HumanUnits.percent(fraction)
        if let expected = job.bytesExpected, job.state != .finished, !complete {
            size = HumanUnits.bytes(job.bytesReceived) + "/" + HumanUnits.bytes(expected)
        } else {
            size = HumanUnits.bytes(job.bytesReceived)
        }
        let downloading = job.state == .downloading
        speed = downloading ? HumanUnits.speed(job.speed) : ""
        eta = downloading ? HumanUnits.duration(job.eta) : ""
        if downloaded { note = "" }
    }

    /// Whether the job failed in its delivery (`delivery_failed`), its download complete.
    static func deliveryFailed(_ job: Job) -> Bool {
        job.state == .failed && (job.error?.code.rawValue == "delivery_failed" || job.delivery?.state == "failed")
    }

    /// One line for logs and pipes, fields separated by two spaces:
    /// `ID  downloading  52%  5.2 MiB/10.0 MiB  1.2 MiB/s  ETA 4s  a.bin`, then `to HOST` for a job with a delivery,
    /// and `code: message` at the end when the job failed or waits for a reason.
    public var plainLine: String {
        var fields = [id, state, percent, size]
        if !speed.isEmpty { fields.append(speed) }
        if !eta.isEmpty { fields.append("ETA " + eta) }
        fields.append(name)
        if !target.isEmpty { fields.append(target) }
        if !note.isEmpty { fields.append(note) }
        return fields.joined(separator: "  ")
    }
}
