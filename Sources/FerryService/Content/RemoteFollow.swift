import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// Streams a file that another node is downloading (several nodes: `?follow=true`, fetch-through's misses): this node
/// has no partial file to read, and the parts the running node stores cannot be read before its upload is completed
/// (S3 gives no access to the parts of an unfinished multipart upload), so the answer's head goes out at once and
/// its body is the finished object, streamed from the object store as soon as the job finishes. The origin is asked
/// once, by the node running the job, however many nodes' clients wait.
///
/// The job's state comes from the supervisor's table, which the cluster's event feed keeps current. A job that
/// fails, is cancelled or deleted, or whose object is not the length announced, aborts the connection, so a client
/// never takes a short body for a whole one.
///
/// Owner: one task per response, holding nothing shared; the stream is the connection's.
enum RemoteFollow {
    /// How often the table is read while the job runs elsewhere.
    static let pollInterval: UInt64 = 50_000_000

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

    /// - Parameter length: the file's size when known for sure (sent as `Content-Length`); nil: chunked.
    static func response(job: JobRecord, supervisor: JobSupervisor, objects: ObjectStoreClient,
                         length: Int64? = nil) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        headers["Content-Type"] = job.contentType ?? "application/octet-stream"
        headers["Cache-Control"] = "no-store"
        if let name = job.filename { headers["Content-Disposition"] = ContentDisposition.attachment(filename: name) }
        let id = job.id
        return HTTPResponse(status: .ok, headers: headers, body: .stream(length: length) { stream in
            guard !stream.isClosed else { return }  // HEAD, or a client already gone
            Task {
                var filename: String?
                while filename == nil {
                    switch step(supervisor.table.entry(id)?.0) {
                    case .wait:
                        try? await Task.sleep(nanoseconds: pollInterval)
                        if stream.isClosed { return }
                    case .read(let name):
                        filename = name
                    case .abort:
                        stream.abort()
                        return
                    }
                }
                do throws(ObjectStoreError) {
                    let key = objects.location.key(jobID: id, filename: filename!)
                    let size = try await objects.headObject(key: key).size
                    if let length, size != length {
                        stream.abort()
                        return
                    }
                    if size > 0 { try await ObjectBody.copy(FileBody(path: key, offset: 0, length: size), of: key,
                                                            from: objects, to: stream) }
                    stream.finish()
                } catch {
                    stream.abort()
                }
            }
        })
    }
}
