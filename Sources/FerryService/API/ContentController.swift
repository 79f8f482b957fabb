import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// `GET`/`HEAD /api/v1/jobs/{id}/content`: a finished file with ranges and validators, or
/// (`?follow=true`) the bytes of a file still downloading, streamed as they arrive.
struct ContentController: Sendable {
    let supervisor: JobSupervisor
    let spool: Spool
    /// Where finished files are read from when there is an object store (`--object-store`); nil: the spool.
    let objects: ObjectStoreClient?

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/api/v1/jobs/:id/content", serve)
    }

    func serve(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let (job, _) = try JobAccess.current.require(await supervisor.job(id), id: id)
        if job.delivery?.state == .delivered, job.delivery?.deleteAfter == true {
            throw APIError(.gone, "the file was delivered and removed from this server (deleteAfter)")
        }
        guard job.state == .finished || job.state == .delivering else {
            let follow = request.queryValue("follow")?.lowercased()
            if follow == "true" || follow == "1", [.waiting, .downloading, .paused].contains(job.state) {
                return self.follow(job)
            }
            throw APIError(.conflict, Self.notFinishedMessage(job))
        }
        return try await finishedFile(request, job: job)
    }

    /// `?follow=true`'s answer: the partial file on this node (`FollowStream`), or, on a node of a cluster where the
    /// job is not running, its finished object once it is complete (`RemoteFollow`).
    /// - Parameter length: the file's size when known for sure (sent as `Content-Length`); nil: chunked.
    func follow(_ job: JobRecord, length: Int64? = nil) -> HTTPResponse {
        if let objects, RemoteFollow.isElsewhere(runningNode: supervisor.peekNode(job.id), localNode: supervisor.role?.node,
                                                 hasObjectStore: true) {
            return RemoteFollow.response(job: job, supervisor: supervisor, objects: objects, length: length)
        }
        return FollowStream.response(job: job, supervisor: supervisor, spool: spool, length: length)
    }

    /// The answer to `request` from a finished job's file (ranges and validators), from the spool or the object store.
    /// Until the file's SHA-256 is known (it may follow `finished` by a moment), the answer has no `Repr-Digest` and
    /// its strong ETag is made of the file's size and modification time (`provisionalTag`) instead of the digest.
    func finishedFile(_ request: HTTPRequest, job: JobRecord) async throws -> HTTPResponse {
        let digest = job.sha256
        guard let filename = job.filename else {
            throw APIError(.internal, "the finished job has no file recorded")
        }
        if let objects {
            return try await serveObject(request, job: job, filename: filename, digest: digest, from: objects)
        }
        let path = spool.finishedPath(for: filename)
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw APIError(.notFound, "the file of this job is no longer in the spool")
        }
        let length = Int64(info.st_size)
        let tag = digest ?? Self.provisionalTag(size: length, modified: info.st_mtim)
        let entity = Representation(
            length: length, etag: EntityTag(value: tag, isWeak: false),
            lastModified: job.finishedAt ?? Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)),
            contentType: job.contentType ?? "application/octet-stream", digest: digest, filename: filename)
        return Self.respond(to: request, with: entity, path: path)
    }

    /// A finished file from the object store: the same answer as from the spool, its bytes read from the object.
    private func serveObject(_ request: HTTPRequest, job: JobRecord, filename: String, digest: String?,
                             from objects: ObjectStoreClient) async throws -> HTTPResponse {
        let key = objects.location.key(jobID: job.id, filename: filename)
        let info: ObjectInfo
        do throws(ObjectStoreError) {
            info = try await objects.headObject(key: key)
        } catch where error.kind == .notFound {
            throw APIError(.notFound, "the file of this job is no longer in the object store")
        } catch {
            throw APIError(.unavailable, "the file of this job cannot be read now: \(error)")
        }
        let entity = Representation(
            length: info.size, etag: EntityTag(value: digest ?? "size-\(info.size)", isWeak: false), lastModified: job.finishedAt ?? Date(),
            contentType: job.contentType ?? "application/octet-stream", digest: digest, filename: filename)
        return ObjectBody.replacingFiles(in: Self.respond(to: request, with: entity, path: key), key: key, client: objects)
    }

    /// A strong validator for a finished file whose digest is not known yet: its size and modification time (the
    /// file is whole and never written again, so these name its bytes until the digest does).
    static func provisionalTag(size: Int64, modified: timespec) -> String {
        "\(size)-\(modified.tv_sec)-\(modified.tv_nsec)"
    }

    /// The 409's sentence for a job without a finished file. It suggests `?follow=true` only where
    /// following can deliver the file (the job may still finish); a cancelled job has no file and
    /// never will, and a failed one needs a resume first.
    static func notFinishedMessage(_ job: JobRecord) -> String {
        switch job.state {
        case .waiting, .downloading:
            return "the job is \(job.state.rawValue), not finished; add ?follow=true to stream it while it downloads"
        case .paused:
            return "the job is paused, not finished; resume it, or add ?follow=true to stream what is on disk now and the rest once it resumes"
        case .failed where job.hasDownloadedFile:
            let reason = job.error.map { ": \($0.message) [\($0.code)]" } ?? ""
            return "the job's delivery failed\(reason); its downloaded file is kept, and resuming it (POST /api/v1/jobs/\(job.id)/resume) delivers it again without downloading"
        case .failed:
            let reason = job.error.map { error in
                let status = error.httpStatus.map { error.message.contains(String($0)) ? "" : " (HTTP \($0))" } ?? ""
                return ": \(error.message)\(status) [\(error.code)]"
            } ?? ""
            return "the job failed and has no file\(reason); resume it (POST /api/v1/jobs/\(job.id)/resume) to try again"
        case .cancelled:
            return "the job was cancelled and has no file; add it again to download it"
        case .finished, .delivering:
            return "the job is finished"
        }
    }

    /// What the validators and headers of a finished file are made of.
    struct Representation: Sendable {
        var length: Int64
        var etag: EntityTag
        var lastModified: Date
        var contentType: String
        /// The SHA-256 (hex) for `Repr-Digest`; nil while it is not known.
        var digest: String?
        var filename: String

        var headers: HTTPHeaders {
            var headers: HTTPHeaders = [:]
            headers["ETag"] = etag.headerValue
            headers["Last-Modified"] = HTTPDate.format(lastModified)
            headers["Accept-Ranges"] = "bytes"
            headers["Cache-Control"] = "private, no-cache"
            headers["Content-Disposition"] = ContentDisposition.attachment(filename: filename)
            if let digest { headers["Repr-Digest"] = "sha-256=:\(Self.base64(hex: digest)):" }
            return headers
        }

        static func base64(hex: String) -> String {
            var bytes: [UInt8] = []
            var iterator = hex.utf8.makeIterator()
            func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
            while let high = iterator.next(), let low = iterator.next() { bytes.append(nibble(high) << 4 | nibble(low)) }
            return Data(bytes).base64EncodedString()
        }
    }

    /// Conditional and range logic of RFC 9110 for one file. Pure apart from the body it points at.
    static func respond(to request: HTTPRequest, with entity: Representation, path: String) -> HTTPResponse {
        var headers = entity.headers
        if let condition = request.headers["If-None-Match"] {
            let matches = condition.trimmingCharacters(in: .whitespaces) == "*"
                || (EntityTag.parseList(condition) ?? []).contains { $0.weakMatch(entity.etag) }
            if matches { return HTTPResponse(status: .notModified, headers: headers) }
        } else if let since = request.headers["If-Modified-Since"].flatMap(HTTPDate.parse),
                  Int64(entity.lastModified.timeIntervalSince1970) <= Int64(since.timeIntervalSince1970) {
            return HTTPResponse(status: .notModified, headers: headers)
        }
        var rangeHeader = request.headers["Range"]
        if rangeHeader != nil, let ifRange = request.headers["If-Range"] {
            // A range applies only while the client's validator still names this representation.
            if let tag = EntityTag.parse(ifRange) {
                if !tag.strongMatch(entity.etag) { rangeHeader = nil }
            } else if let date = HTTPDate.parse(ifRange) {
                if Int64(date.timeIntervalSince1970) != Int64(entity.lastModified.timeIntervalSince1970) { rangeHeader = nil }
            } else {
                rangeHeader = nil
            }
        }
        headers["Content-Type"] = entity.contentType
        let whole = HTTPResponse(status: .ok, headers: headers,
                                 body: .file(FileBody(path: path, offset: 0, length: entity.length)))
        guard let rangeHeader, request.method == .GET || request.method == .HEAD else { return whole }
        switch RangeRequest.parse(rangeHeader, length: entity.length) {
        case .none:
            return whole
        case .unsatisfiable:
            var refusal = errorResponse(.rangeNotSatisfiable, code: "invalid_request",
                                        message: "the range is outside the file's \(entity.length) bytes")
            refusal.headers["Content-Range"] = ContentRange.unsatisfied(total: entity.length)
            refusal.headers["Accept-Ranges"] = "bytes"
            return refusal
        case .satisfiable(let ranges) where ranges.count == 1:
            let range = ranges[0]
            headers["Content-Range"] = ContentRange(first: range.lowerBound, last: range.upperBound, total: entity.length).headerValue
            return HTTPResponse(status: .partialContent, headers: headers,
                                body: .file(FileBody(path: path, offset: range.lowerBound, length: range.upperBound - range.lowerBound + 1)))
        case .satisfiable(let ranges):
            let boundary = "ferry-" + Secret.hex(Secret.randomBytes(12))
            let multipart = MultipartByteRanges.body(ranges: ranges, total: entity.length, contentType: entity.contentType,
                                                     file: path, boundary: boundary)
            headers["Content-Type"] = multipart.contentType
            return HTTPResponse(status: .partialContent, headers: headers, body: .parts(multipart.parts))
        }
    }
}
