/// `ferry show`: one job as aligned `label: value` lines, leaving out what the job does not have. Pure.
///
/// A job with an onward delivery gets `delivery …` lines: the target, the delivery's state and upload numbers, its
/// attempts, the target's last status, its error and when it was delivered.
public enum JobDetails {
    static func deliveryRows(_ delivery: Delivery, job: Job) -> [(String, String?)] {
        let cells = JobCells(job, part: .upload)
        var rows: [(String, String?)] = [
            ("delivery", "\(delivery.method) \(delivery.url)"),
            ("delivery state", cells.state),
            ("delivery progress", "\(cells.percent)  \(cells.size)"),
        ]
        if !cells.speed.isEmpty {
            rows.append(("delivery speed", cells.speed))
            rows.append(("delivery time left", cells.eta))
        }
        rows.append(("delivery attempts", delivery.attempts.map(String.init)))
        rows.append(("delivery status", delivery.httpStatus.map { "HTTP \($0)" }))
        if let error = delivery.error {
            let status = error.httpStatus.map { " (HTTP \($0))" } ?? ""
            rows.append(("delivery error", "\(error.code): \(error.message)\(status)"))
        }
        rows.append(("delivered", delivery.deliveredAt))
        return rows
    }

    /// `source  URL  12.0 MiB  active`, or `dropped (code: message)`.
    static func sourceRow(_ source: JobSource) -> (String, String?) {
        var state = source.state
        if let error = source.error { state += " (\(error.code): \(error.message))" }
        return ("source", "\(source.url)  \(HumanUnits.bytes(source.bytesReceived))  \(state)")
    }

    public static func lines(_ job: Job) -> [String] {
        let cells = JobCells(job)
        var rows: [(String, String?)] = [
            ("id", job.id),
            ("state", cells.state),
            ("url", job.url),
            ("final url", job.finalURL == job.url ? nil : job.finalURL),
            ("filename", job.filename),
            ("progress", "\(cells.percent)  \(cells.size)"),
        ]
        if job.state == .downloading {
            rows.append(("speed", cells.speed))
            rows.append(("time left", cells.eta))
        }
        if let error = job.error {
            let status = error.httpStatus.map { " (HTTP \($0))" } ?? ""
            rows.append(("error", "\(error.code): \(error.message)\(status)"))
        }
        if let delivery = job.delivery { rows += deliveryRows(delivery, job: job) }
        rows += (job.sources ?? []).map(sourceRow)
        rows += [
            ("content type", job.contentType),
            ("sha256", job.sha256),
            ("expected checksum", job.expectedChecksum?.description),
            ("attempts", job.attempts.map(String.init)),
            ("priority", job.priority.map(String.init)),
            ("tags", job.tags.isEmpty ? nil : job.tags.joined(separator: ", ")),
            ("created", job.createdAt),
            ("started", job.startedAt),
            ("finished", job.finishedAt),
            ("content", job.state == .finished ? job.contentURL : nil),
        ]
        let present = rows.compactMap { label, value in value.map { (label, $0) } }
        let width = present.map { $0.0.count }.max() ?? 0
        return present.map { label, value in
            TerminalText.padded(label + ":", to: width + 1) + " " + TerminalText.sanitized(value)
        }
    }
}
