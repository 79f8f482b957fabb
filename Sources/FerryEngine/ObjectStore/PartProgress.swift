/// Which parts of a running download can be uploaded, and what a node taking a job over can continue from (pure).
///
/// Part `n` (1-based) of a file of `size` bytes covers `[(n-1)·partSize, min(n·partSize, size))`, as in `PartPlan`.
/// A part is ready once the file's written ranges (the segment table's `[start, next)` of every segment, all
/// written under the validators the upload was started with) cover it, wherever it lies: a download split over
/// several connections stores its later segments' parts as they complete, not only the prefix.
enum PartProgress {
    /// Numbers of the parts `written` covers that are neither stored nor in flight, lowest first, at most `limit`.
    /// `written` may be unsorted, overlapping or touching.
    static func ready(size: Int64, partSize: Int64, written: [Range<Int64>], done: Set<Int>, limit: Int) -> [Int] {
        guard limit > 0, partSize > 0, size > 0 else { return [] }
        var numbers: [Int] = []
        for run in merged(written) {
            // The first part starting at or after the run's start.
            var number = Int((max(0, run.lowerBound) + partSize - 1) / partSize) + 1
            while numbers.count < limit, Int64(number - 1) * partSize < size {
                guard range(of: number, size: size, partSize: partSize).upperBound <= run.upperBound else { break }
                if !done.contains(number) { numbers.append(number) }
                number += 1
            }
        }
        return numbers
    }

    /// The parts to upload next, at most `limit`: first those of `first` (parts a restore read back, to be stored
    /// again) that `written` covers and that are not `done`, lowest first; then the other ready parts (`ready`).
    static func next(size: Int64, partSize: Int64, written: [Range<Int64>], done: Set<Int>, first: Set<Int>,
                     limit: Int) -> [Int] {
        guard limit > 0, partSize > 0, size > 0 else { return [] }
        let runs = merged(written)
        let count = Int((size + partSize - 1) / partSize)
        let picked = Array(first.subtracting(done).sorted().filter { number in
            (1...count).contains(number) && covers(runs, range(of: number, size: size, partSize: partSize))
        }.prefix(limit))
        guard picked.count < limit else { return picked }
        return picked + ready(size: size, partSize: partSize, written: runs, done: done.union(picked),
                              limit: limit - picked.count)
    }

    /// Whether `record` may replace the one in the ledger while the parts `awaiting` (read back by a restore from
    /// the object at the key, not copied into the new upload) are not all in it: the ledger's record then still
    /// names that object's parts, and a node taking over next restores them from it (issue 33). Removing the
    /// record (nil) waits too; a discard or a finish empties `awaiting` first.
    static func mayRecord(_ record: ObjectUploadRecord?, awaiting: Set<Int>) -> Bool {
        guard !awaiting.isEmpty else { return true }
        guard let record else { return false }
        return awaiting.isSubset(of: Set(record.parts.map(\.number)))
    }

    /// Ready parts of a file whose written bytes are the prefix `[0, prefix)`.
    static func ready(size: Int64, partSize: Int64, prefix: Int64, done: Set<Int>, limit: Int) -> [Int] {
        ready(size: size, partSize: partSize, written: [0..<max(0, prefix)], done: done, limit: limit)
    }

    /// The byte range of part `number`.
    static func range(of number: Int, size: Int64, partSize: Int64) -> Range<Int64> {
        let start = Int64(number - 1) * partSize
        return start..<min(start + partSize, size)
    }

    /// Whether one of `ranges` holds all of `bytes`.
    static func covers(_ ranges: [Range<Int64>], _ bytes: Range<Int64>) -> Bool {
        ranges.contains { $0.lowerBound <= bytes.lowerBound && bytes.upperBound <= $0.upperBound }
    }

    /// `ranges` sorted, with overlapping or touching ones joined, empty ones dropped.
    static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var out: [Range<Int64>] = []
        for range in ranges.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }

    /// What a node starting a job does with the stored record of its upload, given the validators it knows (the
    /// job's) and the ranges of the file in its own spool.
    enum Handover: Equatable {
        /// The record cannot be trusted (another version of the file, parts that do not fit): abort its upload.
        case discard(reason: String)
        /// The local bytes cover every stored part: keep uploading into the same upload.
        case continueUpload
        /// Read the stored `parts` (in part order, not necessarily consecutive) back from the store, then continue.
        case restore(parts: [ObjectUploadRecord.Part])
    }

    /// - Parameters:
    ///   - localWritten: the ranges of the file already in the spool.
    ///   - split: whether the file may resume from ranges with gaps (a segmented resume, which needs an `If-Range`
    ///     validator); otherwise only the parts contiguous from part 1 are restored.
    static func handover(_ record: ObjectUploadRecord, etag: String?, lastModified: String?, size: Int64?,
                         localWritten: [Range<Int64>], split: Bool = true) -> Handover {
        if let size, size != record.size { return .discard(reason: "the file's size changed") }
        if etag != nil || lastModified != nil, etag != record.etag || lastModified != record.lastModified {
            return .discard(reason: "the file's validators changed")
        }
        guard record.etag != nil || record.lastModified != nil, record.partSize > 0 else {
            return .discard(reason: "nothing validates the stored parts")
        }
        let usable = usableParts(record, split: split)
        let local = merged(localWritten)
        let covered = usable.allSatisfy { part in
            covers(local, range(of: part.number, size: record.size, partSize: record.partSize))
        }
        return covered ? .continueUpload : .restore(parts: usable)
    }

    /// The stored parts whose numbers and sizes fit the record's plan, in part order; with `split` false only those
    /// contiguous from part 1.
    static func usableParts(_ record: ObjectUploadRecord, split: Bool = true) -> [ObjectUploadRecord.Part] {
        guard record.partSize > 0, record.size > 0 else { return [] }
        let count = Int((record.size + record.partSize - 1) / record.partSize)
        var usable: [ObjectUploadRecord.Part] = []
        for part in record.parts.sorted(by: { $0.number < $1.number }) {
            let fits = (1...count).contains(part.number) && usable.last?.number != part.number
                && part.size == range(of: part.number, size: record.size, partSize: record.partSize).count
            if split {
                if fits { usable.append(part) }
            } else {
                guard fits, part.number == usable.count + 1 else { break }
                usable.append(part)
            }
        }
        return usable
    }

    /// One stretch of consecutive stored parts: where its bytes sit in the object the stored parts were completed
    /// into (their concatenation, in part order) and where they go in the file.
    struct RestoreRun: Equatable {
        /// The part numbers, consecutive.
        var parts: ClosedRange<Int>
        /// Offset of the run's first byte in the completed object.
        var objectOffset: Int64
        /// The run's bytes in the file.
        var file: Range<Int64>

        /// The object's bytes of part `number` of this run (inclusive offsets, as a ranged GET or copy writes them).
        func objectRange(of number: Int, size: Int64, partSize: Int64) -> ClosedRange<Int64> {
            let bytes = PartProgress.range(of: number, size: size, partSize: partSize)
            let start = objectOffset + (bytes.lowerBound - file.lowerBound)
            return start...(start + Int64(bytes.count) - 1)
        }
    }

    /// The one run of a file whose every part is in the object (a finish completed the upload).
    static func wholeFile(size: Int64, partSize: Int64) -> [RestoreRun] {
        guard size > 0, partSize > 0 else { return [] }
        return [RestoreRun(parts: 1...Int((size + partSize - 1) / partSize), objectOffset: 0, file: 0..<size)]
    }

    /// The runs of `parts` (usable parts in part order), each read back with one ranged GET of the completed object.
    static func restoreRuns(_ parts: [ObjectUploadRecord.Part], size: Int64, partSize: Int64) -> [RestoreRun] {
        var runs: [RestoreRun] = []
        var objectOffset: Int64 = 0
        for part in parts {
            let bytes = range(of: part.number, size: size, partSize: partSize)
            if var last = runs.last, last.parts.upperBound + 1 == part.number {
                last.parts = last.parts.lowerBound...part.number
                last.file = last.file.lowerBound..<bytes.upperBound
                runs[runs.count - 1] = last
            } else {
                runs.append(RestoreRun(parts: part.number...part.number, objectOffset: objectOffset, file: bytes))
            }
            objectOffset += Int64(bytes.count)
        }
        return runs
    }
}
