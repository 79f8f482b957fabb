import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation
import Synchronization

/// Streams a file while it downloads (`?follow=true`, fetch-through's misses): the bytes already on disk, then the
/// rest as they are written, ending when the job finishes. If the job fails, is cancelled or deleted, or its
/// transfer restarts from zero (the bytes already sent are then not the file's), the connection is
/// aborted so the client can never take a spliced body for a whole one.
///
/// Woken by the writer: it watches the job in `Spool.growing`, where the writer publishes its gapless prefix after
/// every write, and queues up to that prefix (bytes `pwrite` returned) as regions of the file, which the connection
/// sends with sendfile(2) from the page cache (a watched or fetched file is not written with direct I/O): no copy
/// through this process, so the clients of one fetched file cost the server little more than one. A 100 ms timer
/// asks the supervisor how the job stands (finished, failed, restarted); when the writer closed the file it asks
/// at once, and every 5 ms for a while, so the end is not held back by the timer.
///
/// Owner: its serial `queue` holds the file and counters; the job's status is asked of the
/// supervisor and handed back to that queue. `wakeQueued` (atomic) coalesces the writer's wake-ups.
final class FollowStream: @unchecked Sendable {
    private let jobID: String
    private let supervisor: JobSupervisor
    private let spool: Spool
    /// Targets one of the spool's follow lanes: a few serial lanes, not a thread per stream with work (`DiskLanes`).
    private let queue: DispatchQueue
    private var stream: ResponseStream?
    /// The file being sent (the partial file, which becomes the finished one when renamed); nil until opened.
    private var file: StreamFile?
    private var sent: Int64 = 0
    private var restartsAtStart: Int?
    private var finalSize: Int64?
    private var timer: DispatchSourceTimer?
    private var asking = false
    /// A drain handler is registered on the stream (`pump`).
    private var awaitingDrain = false
    private var done = false
    private let chunk = 1 << 20
    /// The watch on `spool.growing`, removed on `stop`.
    private var watchToken: Int?
    /// A wake-up from the writer is queued on `queue`.
    private let wakeQueued = Atomic<Bool>(false)
    /// The generation of the partial file the bytes sent came from (`GrowingFiles.Extent`).
    private var generation: Int?
    /// Quick asks of the supervisor left after the writer closed the file (see the type's comment).
    private var quickAsks = 0

    private init(jobID: String, supervisor: JobSupervisor, spool: Spool) {
        self.jobID = jobID
        self.supervisor = supervisor
        self.spool = spool
        self.queue = DispatchQueue(label: "ferry.follow", target: spool.followLanes.lane())
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
            self.watchToken = self.spool.growing.watch(self.jobID) { [weak self] _ in self?.wake() }
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

    /// The writer published a new extent: pump on `queue` (once for any number of wake-ups queued meanwhile).
    private func wake() {
        guard !wakeQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async {
            self.wakeQueued.store(false, ordering: .releasing)
            guard !self.done else { return }
            if !self.awaitingDrain { self.pump() }
            if self.finalSize == nil, self.spool.growing.extent(self.jobID)?.closed == true, self.quickAsks == 0 {
                self.quickAsks = 100
                self.askSupervisor()
            }
        }
    }

    /// Sends what is written while the socket keeps up; when the socket is what stops it, it goes on as soon as the
    /// socket drains; when the writer is, at its next write (`wake`). The timer's ticks also check on the job.
    private func pump() {
        guard !done, let stream else { return }
        if stream.isClosed { stop(); return }
        guard let readable = readableEnd() else { abort(); return }
        if file == nil { openFile() }
        guard let file else { return }
        // Regions of the file, sent by the connection with sendfile(2): no copy through this process.
        while stream.bufferedByteCount < 2 * chunk {
            let limit = Int(min(Int64(chunk), readable - sent))
            guard limit > 0 else { break }
            stream.writeFile(file, offset: sent, length: limit)
            sent += Int64(limit)
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

    /// How far the file may be sent: all of it once the job finished; until then the gapless prefix the writer
    /// published (a segmented download's partial file is preallocated to full size, with ranges not yet written in
    /// between), or, with no writer at work, what the spool says of the file. Nil when the file was emptied or
    /// created anew after bytes were sent (a restart from zero); before any, the file is opened again.
    private func readableEnd() -> Int64? {
        if let finalSize { return finalSize }
        guard let extent = spool.growing.extent(jobID) else {
            // No writer published since this stream's watch made the entry: a writer's first extent there is
            // generation 0 when it kept the bytes, more when it emptied the file.
            if generation == nil { generation = 0 }
            return spool.partialPrefix(jobID: jobID)
        }
        if let generation, extent.generation != generation {
            guard sent == 0 else { return nil }
            file = nil
        }
        generation = extent.generation
        return extent.prefix
    }

    private func openFile() {
        let descriptor = open(spool.partialPath(for: jobID), O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 { file = StreamFile(descriptor: descriptor) }
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
            if file == nil, let name = status.filename {
                let descriptor = open(spool.finishedPath(for: name), O_RDONLY | O_CLOEXEC)
                if descriptor < 0 { abort(); return }
                file = StreamFile(descriptor: descriptor)
            }
            if !awaitingDrain { pump() }  // the rest at once, not at the next tick
        case .paused:
            break
        case .waiting, .downloading:
            // The writer closed the file: the news that the job finished is on its way (see the type's comment).
            guard quickAsks > 0 else { break }
            quickAsks -= 1
            queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [weak self] in self?.askSupervisor() }
        }
    }

    /// True when the partial file is no longer the one being read, or shrank below what was sent:
    /// either way the transfer started over.
    private func replacedOrTruncated() -> Bool {
        guard let file else { return false }
        var mine = stat()
        guard fstat(file.descriptor, &mine) == 0 else { return true }
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
        if let watchToken { spool.growing.unwatch(jobID, token: watchToken) }
        watchToken = nil
        timer?.cancel()
        timer = nil
        file = nil
        stream = nil
    }
}
