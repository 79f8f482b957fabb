/// What a restore of a job's stored parts reads and stores again (pure; `PartRestore` carries it out).
///
/// The usable stored parts (`PartProgress.handover`) are completed into the object at the job's key, their
/// concatenation in part order; each run of consecutive parts (`PartProgress.restoreRuns`) is then read back with one
/// ranged GET of that object. When the recorded upload is already gone and the object at the key is the whole file
/// (a node stopped after a finish completed it, before the job was reported finished), the whole file is one run.
/// Runs forming a prefix make a contiguous partial file; otherwise, with an `If-Range` validator, the file resumes
/// split (`splitValidator`). The parts read back are copied into the new upload from the same object
/// (`copies`); those a copy did not store are `awaiting`, uploaded from the spool first.
struct PartRestorePlan: Equatable {
    let record: ObjectUploadRecord
    /// The stored parts restored, in part order.
    let parts: [ObjectUploadRecord.Part]
    /// The runs read back, in file order.
    private(set) var runs: [PartProgress.RestoreRun]

    init(record: ObjectUploadRecord, parts: [ObjectUploadRecord.Part]) {
        self.record = record
        self.parts = parts
        runs = PartProgress.restoreRuns(parts, size: record.size, partSize: record.partSize)
    }

    /// The bytes of the parts: the size of the object they are completed into.
    var bytes: Int64 { parts.reduce(0) { $0 + $1.size } }

    /// Completing the recorded upload failed as if it were done already, and the object at the key has `size`
    /// bytes: true when that object can be read back (the parts' concatenation, or the whole file: then it is one
    /// run), false when it is something else.
    mutating func objectFound(size: Int64) -> Bool {
        if size == record.size, size != bytes {
            runs = PartProgress.wholeFile(size: record.size, partSize: record.partSize)
            return true
        }
        return size == bytes
    }

    /// The validator a split resume is made with: nil when the runs form a prefix (one run from byte 0) or there is
    /// no `validator` to resume a split file with.
    func splitValidator(_ validator: String?) -> String? {
        validator.flatMap { runs.count == 1 && runs[0].file.lowerBound == 0 ? nil : $0 }
    }

    /// The runs to read: every one for a split resume, else only a run from byte 0.
    func runsToRead(split: Bool) -> [PartProgress.RestoreRun] {
        split ? runs : runs.filter { $0.file.lowerBound == 0 }
    }

    /// The parts the `restored` ranges of the file hold whole, in part order.
    func readBack(_ restored: [Range<Int64>]) -> [Int] {
        runs.flatMap { Array($0.parts) }.filter { PartProgress.covers(restored, range(of: $0)) }
    }

    /// The copies into the new upload: each part read back and the object's bytes it is copied from.
    func copies(_ restored: [Range<Int64>]) -> [(part: Int, source: ClosedRange<Int64>)] {
        runs.flatMap { run in
            run.parts.filter { PartProgress.covers(restored, range(of: $0)) }.map { number in
                (number, run.objectRange(of: number, size: record.size, partSize: record.partSize))
            }
        }
    }

    /// Parts read back that the new upload (`stored`: nil when none was started) does not hold.
    func awaiting(_ restored: [Range<Int64>], stored: ObjectUploadRecord?) -> Set<Int> {
        Set(readBack(restored)).subtracting(stored?.parts.map(\.number) ?? [])
    }

    private func range(of number: Int) -> Range<Int64> {
        PartProgress.range(of: number, size: record.size, partSize: record.partSize)
    }
}
