/// Which parts of a running download can be uploaded, and what a node taking a job over can continue from (pure).
///
/// Part `n` (1-based) of a file of `size` bytes covers `[(n-1)·partSize, min(n·partSize, size))`, as in `PartPlan`.
/// A part is ready once the written prefix of the file (bytes `[0, prefix)`, all written under the validators the
/// upload was started with) covers it.
enum PartProgress {
    /// Numbers of the parts `[0, prefix)` covers that are neither stored nor in flight, lowest first, at most `limit`.
    static func ready(size: Int64, partSize: Int64, prefix: Int64, done: Set<Int>, limit: Int) -> [Int] {
        guard limit > 0, partSize > 0, size > 0 else { return [] }
        var numbers: [Int] = []
        var number = 1
        while numbers.count < limit {
            let end = min(Int64(number) * partSize, size)
            guard end <= min(prefix, size), Int64(number - 1) * partSize < size else { break }
            if !done.contains(number) { numbers.append(number) }
            number += 1
        }
        return numbers
    }

    /// The byte range of part `number`.
    static func range(of number: Int, size: Int64, partSize: Int64) -> Range<Int64> {
        let start = Int64(number - 1) * partSize
        return start..<min(start + partSize, size)
    }

    /// What a node starting a job does with the stored record of its upload, given the validators it knows (the
    /// job's) and the contiguous bytes in its own spool.
    enum Handover: Equatable {
        /// The record cannot be trusted (another version of the file, parts that do not fit): abort its upload.
        case discard(reason: String)
        /// The local bytes reach at least as far as the stored parts: keep uploading into the same upload.
        case continueUpload
        /// Read the first `parts` (contiguous from part 1, `bytes` in all) back from the store, then continue.
        case restore(parts: [ObjectUploadRecord.Part], bytes: Int64)
    }

    static func handover(_ record: ObjectUploadRecord, etag: String?, lastModified: String?, size: Int64?,
                         localBytes: Int64) -> Handover {
        if let size, size != record.size { return .discard(reason: "the file's size changed") }
        if etag != nil || lastModified != nil, etag != record.etag || lastModified != record.lastModified {
            return .discard(reason: "the file's validators changed")
        }
        guard record.etag != nil || record.lastModified != nil, record.partSize > 0 else {
            return .discard(reason: "nothing validates the stored parts")
        }
        let usable = usableParts(record)
        let bytes = usable.reduce(0) { $0 + $1.size }
        return localBytes >= bytes || usable.isEmpty ? .continueUpload : .restore(parts: usable, bytes: bytes)
    }

    /// The stored parts contiguous from part 1 whose sizes fit the record's plan.
    static func usableParts(_ record: ObjectUploadRecord) -> [ObjectUploadRecord.Part] {
        var usable: [ObjectUploadRecord.Part] = []
        for part in record.parts.sorted(by: { $0.number < $1.number }) {
            guard part.number == usable.count + 1,
                  part.size == range(of: part.number, size: record.size, partSize: record.partSize).count else { break }
            usable.append(part)
        }
        return usable
    }
}
