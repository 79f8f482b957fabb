/// `ferry show`: one job as aligned `label: value` lines, leaving out what the job does not have. Pure.
public enum JobDetails {
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
        rows += [
            ("content type", job.contentType),
            ("sha256", job.sha256),
            ("expected sha256", job.expectedSHA256),
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
