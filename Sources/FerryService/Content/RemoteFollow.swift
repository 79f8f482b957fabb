import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// Streams a file that another node is downloading (several nodes: `?follow=true`, fetch-through's misses): this node
/// has no partial file to read. The answer's head goes out at once; its body is read from the object store
/// (`RemoteFollowReader`): the running node's stored parts in order as they are stored, each from the readable copy
/// a fetch job's parts get (`ObjectStoreLocation.livePartKey`: S3 gives no read of an unfinished upload's parts), so
/// the body lags the download by up to one part, then the rest from the finished object. The origin is asked once,
/// by the node running the job, however many nodes' clients wait.
///
/// These are the pure decisions; the reading is `RemoteFollowReader`'s.
enum RemoteFollow {
    /// Whether a follow of a job must be served this way: on a node of a cluster (an object store and a node id)
    /// where the job is not running (running elsewhere, or not claimed yet, so it may run anywhere). Pure.
    static func isElsewhere(runningNode: String?, localNode: String?, hasObjectStore: Bool) -> Bool {
        guard hasObjectStore, let localNode else { return false }
        return runningNode != localNode
    }

    /// What the wait on a job's state decides. Pure.
    enum Step: Equatable {
        case wait
        /// Finished: its object is read (its file's name).
        case read(filename: String)
        case abort
    }

    static func step(_ job: JobRecord?) -> Step {
        guard let job else { return .abort }
        switch job.state {
        case .finished, .delivering:
            guard let filename = job.filename else { return .abort }
            return .read(filename: filename)
        case .failed, .cancelled:
            return .abort
        case .waiting, .downloading, .paused:
            return .wait
        }
    }

    /// The stored part that holds byte `sent` of the file, when the record lists it: its number, where `sent` lies
    /// in it and how many bytes are left in it. Pure.
    static func nextPart(_ record: ObjectUploadRecord, sent: Int64) -> (number: Int, offset: Int64, length: Int64)? {
        guard record.partSize > 0, sent >= 0, sent < record.size else { return nil }
        let number = Int(sent / record.partSize) + 1
        guard let part = record.parts.first(where: { $0.number == number }) else { return nil }
        let offset = sent - Int64(number - 1) * record.partSize
        guard offset < part.size else { return nil }
        return (number, offset, part.size - offset)
    }

    /// Whether the bytes a record holds are those of the file whose first bytes were sent (the same validators and
    /// size), so they may follow them. Pure.
    static func sameFile(_ record: ObjectUploadRecord, as first: ObjectUploadRecord) -> Bool {
        record.etag == first.etag && record.lastModified == first.lastModified && record.size == first.size
    }

    /// - Parameter length: the file's size when known for sure (sent as `Content-Length`); nil: chunked.
    static func response(job: JobRecord, supervisor: JobSupervisor, objects: ObjectStoreClient,
                         length: Int64? = nil) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        headers["Content-Type"] = job.contentType ?? "application/octet-stream"
        headers["Cache-Control"] = "no-store"
        if let name = job.filename { headers["Content-Disposition"] = ContentDisposition.attachment(filename: name) }
        let reader = RemoteFollowReader(jobID: job.id, supervisor: supervisor, objects: objects, length: length)
        return HTTPResponse(status: .ok, headers: headers, body: .stream(length: length) { stream in
            guard !stream.isClosed else { return }  // HEAD, or a client already gone
            Task { await reader.run(stream) }
        })
    }
}
