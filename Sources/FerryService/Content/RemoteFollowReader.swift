import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation
import Synchronization

/// Reads a file another node is downloading into one client's stream (`RemoteFollow`): while the job runs, the
/// parts its node stored (the parts record in the cluster's store, read every 250 ms), each from its readable copy,
/// as far as they are contiguous from the bytes sent; once the job finished, the rest from its object.
///
/// A job that fails, is cancelled or deleted, whose stored bytes change validators after some were sent (a restart
/// from zero with another version), or whose object is not the length announced aborts the connection, so a client
/// never takes a short or spliced body for a whole one. A part copy that cannot be read (not stored, or deleted at
/// the finish) is simply waited past: the finished object has every byte.
///
/// Owner: one task per response (`run`); `sent` is that task's, its counter written by the object client's sink.
final class RemoteFollowReader: Sendable {
    private let jobID: String
    private let supervisor: JobSupervisor
    private let objects: ObjectStoreClient
    private let length: Int64?
    /// Bytes written to the stream (the sink adds each chunk as it writes it).
    private let sent = Atomic<Int64>(0)
    /// How often the job's state is read, and the parts record every how many of those.
    static let pollInterval: UInt64 = 50_000_000
    static let recordEvery = 5

    init(jobID: String, supervisor: JobSupervisor, objects: ObjectStoreClient, length: Int64?) {
        self.jobID = jobID
        self.supervisor = supervisor
        self.objects = objects
        self.length = length
    }

    func run(_ stream: ResponseStream) async {
        var first: ObjectUploadRecord?
        var tick = 0
        // Only a fetch job's parts get readable copies (`TransferSpec.readWhileWritten`); another job's file comes whole.
        let copied = supervisor.table.entry(jobID)?.0.tags.contains(FetchCache.tag) ?? false
        while !stream.isClosed {
            switch RemoteFollow.step(supervisor.table.entry(jobID)?.0) {
            case .abort:
                stream.abort()
                return
            case .read(let filename):
                // Bytes sent from parts must be of the version the job finished with.
                if let first, sent.load(ordering: .acquiring) > 0, let etag = supervisor.table.entry(jobID)?.0.etag,
                   let stored = first.etag, etag != stored {
                    stream.abort()
                    return
                }
                await finish(stream, filename: filename)
                return
            case .wait:
                if copied, tick % Self.recordEvery == 0, let record = await record() {
                    if first == nil || sent.load(ordering: .acquiring) == 0 { first = record }
                    guard let first, RemoteFollow.sameFile(record, as: first),
                          length == nil || length == record.size else {
                        stream.abort()
                        return
                    }
                    await copyParts(record, to: stream)
                }
                tick += 1
                try? await Task.sleep(nanoseconds: Self.pollInterval)
            }
        }
    }

    /// The job's parts record, as the running node last stored it; nil when there is none or it cannot be read.
    private func record() async -> ObjectUploadRecord? {
        guard let store = supervisor.role?.store,
              let document = try? await store.objectUpload(jobID: jobID) else { return nil }
        return try? JSONDecoder().decode(ObjectUploadRecord.self, from: Data(document.utf8))
    }

    /// Every stored part contiguous from the bytes sent, from its readable copy.
    private func copyParts(_ record: ObjectUploadRecord, to stream: ResponseStream) async {
        while !stream.isClosed, let next = RemoteFollow.nextPart(record, sent: sent.load(ordering: .acquiring)) {
            let key = objects.location.livePartKey(jobID: jobID, number: next.number)
            do throws(ObjectStoreError) {
                try await ObjectBody.copy(FileBody(path: key, offset: next.offset, length: next.length), of: key,
                                          from: objects, to: stream, wrote: count)
            } catch {
                return  // not readable (yet, or any more): the next look, or the finished object, has it
            }
        }
    }

    /// The rest of the file from the finished object.
    private func finish(_ stream: ResponseStream, filename: String) async {
        let key = objects.location.key(jobID: jobID, filename: filename)
        do throws(ObjectStoreError) {
            let size = try await objects.headObject(key: key).size
            let from = sent.load(ordering: .acquiring)
            if let length, size != length { stream.abort(); return }
            if from > size { stream.abort(); return }
            if from < size {
                try await ObjectBody.copy(FileBody(path: key, offset: from, length: size - from), of: key,
                                          from: objects, to: stream, wrote: count)
            }
            stream.finish()
        } catch {
            stream.abort()
        }
    }

    private var count: @Sendable (Int) -> Void {
        { [self] bytes in _ = self.sent.add(Int64(bytes), ordering: .releasing) }
    }
}
