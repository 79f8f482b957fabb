import Dispatch
import Logging

/// Carries out a restore of a job's stored parts (`PartRestorePlan` decides what; `DownloadEngine+Parts` says why
/// and when): completes the recorded upload into the object at the job's key, reads its runs back into the partial
/// file through the writer, and starts a new upload at the key with the parts read back copied inside the store.
///
/// It runs in a task of its own and holds no state of the engine's: the writer's completions and the object reads'
/// sinks (`RestoreSink`) run on the engine `queue`, and the engine applies the outcome there.
struct PartRestore: Sendable {
    let client: ObjectStoreClient
    let writer: FileWriter
    /// The engine queue.
    let queue: DispatchQueue
    let logger: Logger
    let jobID: String
    /// Bytes a read may have waiting to be written before it pauses (`EngineConfiguration.writeBufferLimit`).
    let writeBufferLimit: Int

    /// Reads of a run a restore makes before it continues from what it has.
    static let reads = 5

    enum Outcome {
        /// The stored parts cannot be read back (step 1 failed): the start goes on from the local bytes.
        case unusable(ObjectStoreError)
        /// What the partial file holds now, the new upload (nil if none was started) and the parts read back that it
        /// does not hold (`LiveParts.awaiting`).
        case restored(opened: Result<FileWriter.OpenedPartial, SystemError>, record: ObjectUploadRecord?, awaiting: Set<Int>)
    }

    /// - Parameter validator: the `If-Range` validator a split resume would use (the record's).
    func run(_ plan: PartRestorePlan, validator: String?) async -> Outcome {
        var plan = plan
        let record = plan.record
        // 1. The stored parts as the object at the key (done already if a node stopped after this step).
        do throws(ObjectStoreError) {
            do throws(ObjectStoreError) {
                _ = try await client.completeMultipartUpload(key: record.key, uploadID: record.uploadID, parts: plan.parts)
            } catch where error.kind == .notFound || error.kind == .rejected {
                // The finish may have completed the upload with every part: the object is then the whole file.
                let info = try await client.headObject(key: record.key)
                guard plan.objectFound(size: info.size) else { throw error }
            }
        } catch {
            return .unusable(error)
        }
        // 2. Read back through the writer, which hashes the bytes in file order.
        let (opened, restored) = await readBack(plan, validator: validator)
        // 3. A new upload at the key, the restored parts copied from the completed object inside the store.
        var next: ObjectUploadRecord?
        if case .success = opened {
            do throws(ObjectStoreError) {
                let uploadID = try await client.createMultipartUpload(key: record.key, contentType: nil)
                var copy = ObjectUploadRecord(key: record.key, uploadID: uploadID, partSize: record.partSize, etag: record.etag,
                                              lastModified: record.lastModified, size: record.size, prefixObject: true)
                next = copy
                for (number, source) in plan.copies(restored) {
                    let copied = try await client.uploadPartCopy(key: record.key, uploadID: uploadID, partNumber: number,
                                                                 sourceKey: record.key, range: source)
                    copy.store(copied)
                    next = copy
                }
                logger.info("restored parts copied inside the store", metadata: ["id": "\(jobID)", "parts": "\(copy.parts.count)"])
            } catch {
                logger.notice("copying restored parts failed: they are uploaded from the spool",
                              metadata: ["id": "\(jobID)", "error": "\(error)"])
            }
        }
        return .restored(opened: opened, record: next, awaiting: plan.awaiting(restored, stored: next))
    }

    /// Empties the partial file and writes the plan's runs of the completed object into it, at their places in the
    /// file; returns what the file then holds and the ranges written. A read that ends early (the store dropped the
    /// connection, a chunk could not be read) continues from the bytes written, up to `reads` reads a run.
    ///
    /// Runs forming a prefix make a contiguous file, as any resume has. Otherwise the file becomes a segmented
    /// download: its segment sidecar is stored before the first byte lands past a gap (`prepareSegments`, so a file
    /// with gaps never lacks one), and the sidecar of the ranges restored after them (`saveSegments` syncs the bytes
    /// first), so the segmented resume fetches only the gaps, with `If-Range`.
    private func readBack(_ plan: PartRestorePlan, validator: String?) async
        -> (Result<FileWriter.OpenedPartial, SystemError>, [Range<Int64>]) {
        let writer = self.writer, size = plan.record.size, key = plan.record.key
        let emptied: Result<Int64, SystemError> = await withCheckedContinuation { continuation in
            writer.open(keepExisting: false) { continuation.resume(returning: $0) }
        }
        if case .failure(let error) = emptied { return (.failure(error), []) }
        let split = plan.splitValidator(validator)
        if let split, let empty = SegmentTable.restored(total: size, written: []) {
            let error: SystemError? = await withCheckedContinuation { continuation in
                writer.prepareSegments(SegmentSidecar(validator: split, table: empty)) { continuation.resume(returning: $0) }
            }
            if let error { return (.failure(error), []) }
        }
        var restored: [Range<Int64>] = []
        for run in plan.runsToRead(split: split != nil) {
            var end = run.file.lowerBound
            for read in 1...Self.reads where end < run.file.upperBound {
                if read > 1 { try? await Task.sleep(for: .milliseconds(250 << min(read - 2, 4))) }
                let sink = RestoreSink(writer: writer, limit: Int64(writeBufferLimit), from: end)
                let reading = ObjectReading()
                sink.reading = reading
                var failure: ObjectStoreError?
                do throws(ObjectStoreError) {
                    let range = (run.objectOffset + end - run.file.lowerBound)...(run.objectOffset + Int64(run.file.count) - 1)
                    _ = try await client.getObject(key: key, range: range, reading: reading) { chunk in sink.take(chunk) }
                } catch {
                    failure = error
                }
                let before = end
                end = await withCheckedContinuation { continuation in
                    queue.async { sink.whenWritten { continuation.resume(returning: $0) } }
                }
                if failure != nil || end < run.file.upperBound {
                    logger.warning("reading stored parts back ended early", metadata: [
                        "id": "\(jobID)", "parts": "\(run.parts)", "read": "\(read)", "from": "\(before)", "to": "\(end)",
                        "error": "\(failure.map { "\($0)" } ?? "the answer ended early")",
                    ])
                }
                if let failure, !failure.isRetryable { break }
            }
            if end > run.file.lowerBound { restored.append(run.file.lowerBound..<min(end, run.file.upperBound)) }
            if end < run.file.upperBound, split == nil { break }
        }
        guard let split, let table = SegmentTable.restored(total: size, written: restored) else {
            return (.success(.contiguous(bytes: restored.first?.upperBound ?? 0)), restored)
        }
        let sidecar = SegmentSidecar(validator: split, table: table)
        let error: SystemError? = await withCheckedContinuation { continuation in
            writer.saveSegments(sidecar) { continuation.resume(returning: $0) }
        }
        if let error { return (.failure(error), restored) }
        return (.success(.segmented(sidecar)), restored)
    }
}
