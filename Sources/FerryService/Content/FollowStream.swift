import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// Streams a file while it downloads (`?follow=true`): the bytes already on disk, then the rest as
/// they arrive, ending when the job finishes. If the job fails, is cancelled or deleted, or its
/// transfer restarts from zero (the bytes already sent are then not the file's), the connection is
/// aborted so the client can never take a spliced body for a whole one.
///
/// Owner: its serial `queue` holds the descriptor and counters; the job's status is asked of the
/// supervisor and handed back to that queue.
final class FollowStream: @unchecked Sendable {
    private let jobID: String
    private let supervisor: JobSupervisor
    private let spool: Spool
    private let queue = DispatchQueue(label: "ferry.follow")
    private var stream: ResponseStream?
    private var fd: Int32 = -1
    private var sent: Int64 = 0
    private var restartsAtStart: Int?
    private var finalSize: Int64?
    private var timer: DispatchSourceTimer?
    private var asking = false
    /// A drain handler is registered on the stream (`pump`).
    private var awaitingDrain = false
    private var done = false
    private let chunk = 1 << 20

    private init(jobID: String, supervisor: JobSupervisor, spool: Spool) {
        self.jobID = jobID
        self.supervisor = supervisor
        self.spool = spool
    }

    /// - Parameter length: the file's size when known for sure (sent as `Content-Length`); nil: chunked.
    static func response(job: JobRecord, supervisor: JobSupervisor, spool: Spool, length: Int64? = nil) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        headers["Content-Type"] = job.contentType ?? "application/octet-stream"
        headers["Cache-Control"] = "no-store"
        if let name = job.filename { headers["Content-Disposition"] = ContentDisposition.attachment(filename: name) }
        let follower = FollowStream(jobID: job.id, supervisor: supervisor, spool: spool)
        return HTTPResponse(status: .ok, headers: headers, body: .stream(length: length) { stream in
            follower.start(stream)
        })
    }

    private func start(_ stream: ResponseStream) {
        queue.async {
            self.stream = stream
            stream.onClose { [weak self] in
                guard let self else { return }
                self.queue.async { self.stop() }
            }
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.setEventHandler { [weak self] in
                self?.pump()
                self?.askSupervisor()
            }
            timer.schedule(deadline: .now(), repeating: .milliseconds(100), leeway: .milliseconds(20))
            timer.activate()
            self.timer = timer
        }
    }

    /// Sends what is on disk while the socket keeps up; when the socket is what stops it, it goes on as soon as the
    /// socket drains (not at the next tick, which would cap a stream at two chunks per tick). The timer's ticks
    /// also check on the job.
    private func pump() {
        guard !done, let stream else { return }
        if stream.isClosed { stop(); return }
        if fd < 0 { openFile() }
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: chunk)
        // Until the job finishes, only the gapless prefix may be sent: a segmented download's
        // partial file is preallocated to full size, with ranges not yet written in between.
        let readable = finalSize ?? spool.partialPrefix(jobID: jobID)
        while stream.bufferedByteCount < 2 * chunk {
            let limit = Int(min(Int64(chunk), readable - sent))
            guard limit > 0 else { break }
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, limit, off_t(sent)) }
            guard count > 0 else { break }
            stream.write(Array(buffer[0..<count]))
            sent += Int64(count)
        }
        if let finalSize, sent >= finalSize {
            stream.finish()
            stop()
            return
        }
        if stream.bufferedByteCount >= 2 * chunk, !awaitingDrain {
            awaitingDrain = true
            stream.onDrain(threshold: chunk) { [weak self] in
                guard let self else { return }
                self.queue.async {
                    self.awaitingDrain = false
                    self.pump()
                }
            }
        }
    }

    private func openFile() {
        let partial = spool.partialPath(for: jobID)
        fd = open(partial, O_RDONLY | O_CLOEXEC)
    }

    private func askSupervisor() {
        guard !asking else { return }
        asking = true
        let id = jobID, supervisor = supervisor
        Task {
            let status = await supervisor.followStatus(id)
            self.queue.async { self.asking = false; self.consider(status) }
        }
    }

    private func consider(_ status: JobSupervisor.FollowStatus?) {
        guard !done else { return }
        guard let status else { abort(); return }
        if restartsAtStart == nil { restartsAtStart = status.restarts }
        if status.restarts != restartsAtStart || replacedOrTruncated() { abort(); return }
        switch status.state {
        case .failed, .cancelled:
            abort()
        case .finished, .delivering:
            finalSize = status.bytesOnDisk
            if fd < 0, let name = status.filename {
                fd = open(spool.finishedPath(for: name), O_RDONLY | O_CLOEXEC)
                if fd < 0 { abort(); return }
            }
            if !awaitingDrain { pump() }  // the rest at once, not at the next tick
        case .waiting, .downloading, .paused:
            break
        }
    }

    /// True when the partial file is no longer the one being read, or shrank below what was sent:
    /// either way the transfer started over.
    private func replacedOrTruncated() -> Bool {
        guard fd >= 0 else { return false }
        var mine = stat()
        guard fstat(fd, &mine) == 0 else { return true }
        if Int64(mine.st_size) < sent { return true }
        var current = stat()
        if stat(spool.partialPath(for: jobID), &current) == 0, current.st_ino != mine.st_ino { return true }
        return false
    }

    private func abort() {
        stream?.abort()
        stop()
    }

    private func stop() {
        guard !done else { return }
        done = true
        timer?.cancel()
        timer = nil
        if fd >= 0 { close(fd); fd = -1 }
        stream = nil
    }
}
