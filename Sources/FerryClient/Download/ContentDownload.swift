import Foundation

/// Downloads a finished job's file from `GET /api/v1/jobs/{id}/content` into a local file, continuing a partial
/// local file where it stops, and checks the result against the job's SHA-256.
///
/// A partial file is continued with `Range: bytes=N-` and `If-Range` set to the content's `ETag`: if the file on
/// the server is another one now, the answer is `200` and the download starts over, so bytes of two versions
/// are never joined. If the finished file still does not match the digest (the local prefix was not this
/// file's), it starts over once from zero. Owns the local file while it runs; one thread.
public final class ContentDownload {
    private let api: FerryAPI
    /// `(bytes on disk, total)` as the download moves.
    private let progress: (Int64, Int64) -> Void

    public init(api: FerryAPI, progress: @escaping (Int64, Int64) -> Void = { _, _ in }) {
        self.api = api
        self.progress = progress
    }

    /// Where `get` writes: `output` (a file, or a directory to put the job's filename in), else the job's
    /// filename in the current directory, sanitized.
    public static func destination(output: String?, job: Job) -> String {
        let name = LocalFilename.sanitize(job.filename)
        guard let output, !output.isEmpty else { return name }
        if output.hasSuffix("/") || LocalFile.isDirectory(output) {
            return (output.hasSuffix("/") ? output : output + "/") + name
        }
        return output
    }

    /// - Throws: `.failed` when the job is not finished, `.checksumMismatch` when the bytes do not match the
    ///   job's digest, API, transport and file errors.
    public func run(job: Job, to path: String) throws(ClientError) -> DownloadReport {
        let job = try withDigest(job)
        guard job.state == .finished else {
            throw .failed("job \(job.id) is \(job.state), not finished: there is no file to get yet [conflict]")
        }
        guard let expected = job.sha256?.lowercased() else {
            throw .failed("job \(job.id) is finished but Ferry gave no sha256 for it")
        }
        let head = try api.contentHead(job.id)
        guard let length = head.header("Content-Length").flatMap({ Int64($0) }) else {
            throw .unexpectedResponse(status: head.status, detail: "no Content-Length for the job's content")
        }
        let etag = head.header("ETag")
        switch ResumePlan.decide(localSize: LocalFile.size(of: path), remoteLength: length, validator: etag) {
        case .verifyExisting:
            var digest = SHA256()
            try LocalFile.digest(of: path, into: &digest)
            let actual = digest.finishHex()
            if actual == expected {
                return DownloadReport(path: path, bytes: length, resumedFrom: length, transferred: 0, sha256: actual)
            }
            return try fetch(job, to: path, from: 0, etag: nil, expected: expected, length: length)
        case .fromStart:
            return try fetch(job, to: path, from: 0, etag: nil, expected: expected, length: length)
        case .resume(let offset):
            let report = try fetch(job, to: path, from: offset, etag: etag, expected: expected, length: length,
                                   acceptMismatch: true)
            if report.sha256 == expected { return report }
            return try fetch(job, to: path, from: 0, etag: nil, expected: expected, length: length)
        }
    }

    /// The job once its SHA-256 is known: it may follow `finished` by a moment (API.md), so a finished job without
    /// one is asked for again, every quarter second for up to two minutes (a large file on a CPU without SHA
    /// extensions hashes at a few hundred MB/s).
    private func withDigest(_ job: Job) throws(ClientError) -> Job {
        var job = job
        let deadline = Date().addingTimeInterval(120)
        while job.state == .finished, job.sha256 == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.25)
            job = try api.job(job.id).value
        }
        return job
    }

    /// One GET, from `offset` (with `If-Range: etag`) or from zero. With `acceptMismatch` a wrong digest is
    /// returned in the report rather than thrown (the caller retries from zero).
    private func fetch(_ job: Job, to path: String, from offset: Int64, etag: String?, expected: String,
                       length: Int64, acceptMismatch: Bool = false) throws(ClientError) -> DownloadReport {
        // Opened once Ferry answers with bytes, so a refused request leaves no empty file behind.
        var file: LocalFile?
        defer { file?.close() }
        var digest = SHA256()
        var headers: [ClientRequest.Header] = []
        if offset > 0, let etag {
            headers = [.init("Range", "bytes=\(offset)-"), .init("If-Range", etag)]
        }
        var kept: Int64 = 0
        var written: Int64 = 0
        var total = length
        try api.content(job.id, headers: headers, onHead: { head in
            let opened = try LocalFile(writingTo: path)
            file = opened
            if head.status == 206 {
                guard offset > 0, ResumePlan.rangeStart(head.header("Content-Range")) == offset else {
                    throw ClientError.unexpectedResponse(status: 206, detail: "a range Ferry was not asked for: "
                        + (head.header("Content-Range") ?? "no Content-Range"))
                }
                kept = offset
                try LocalFile.digest(of: path, length: offset, into: &digest)
                try opened.truncate(to: offset)
            } else {
                // 200: the whole file (no range asked, or the file changed and If-Range did not match).
                kept = 0
                try opened.truncate(to: 0)
                if let whole = head.header("Content-Length").flatMap({ Int64($0) }) { total = whole }
            }
            self.progress(kept, total)
        }, onBody: { chunk in
            try file?.write(chunk)
            digest.update(chunk)
            written += Int64(chunk.count)
            self.progress(kept + written, total)
        })
        guard let file else { throw .unexpectedResponse(status: 0, detail: "no answer to the content request") }
        try file.sync()
        file.close()
        let size = kept + written
        guard size == total else {
            throw .failed("the download of job \(job.id) ended after \(size) of \(total) bytes; run `ferry get` again to continue")
        }
        let actual = digest.finishHex()
        if actual != expected && !acceptMismatch {
            throw .checksumMismatch(path: path, expected: expected, actual: actual)
        }
        return DownloadReport(path: path, bytes: size, resumedFrom: kept, transferred: written, sha256: actual)
    }
}
