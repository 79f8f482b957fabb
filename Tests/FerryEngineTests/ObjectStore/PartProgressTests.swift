import Testing
@testable import FerryEngine

@Suite("PartProgress")
struct PartProgressTests {
    static let part: Int64 = 5 << 20
    static let size = 3 * part + 100

    static func record(parts: [Int], etag: String? = "\"v1\"", lastModified: String? = nil) -> ObjectUploadRecord {
        ObjectUploadRecord(key: "jobs/a/f.bin", uploadID: "u1", partSize: part, etag: etag, lastModified: lastModified, size: size,
                           parts: parts.map { .init(number: $0, etag: "\"e\($0)\"",
                                                    size: Int64(PartProgress.range(of: $0, size: size, partSize: part).count)) })
    }

    @Test func aPartIsReadyOnceThePrefixCoversIt() {
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: Self.part - 1, done: [], limit: 2) == [])
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: Self.part, done: [], limit: 2) == [1])
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: 3 * Self.part, done: [1], limit: 2) == [2, 3])
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: 3 * Self.part, done: [], limit: 1) == [1])
        // The short last part needs the whole file.
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: Self.size - 1, done: [1, 2, 3], limit: 2) == [])
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: Self.size, done: [1, 2, 3], limit: 2) == [4])
        #expect(PartProgress.ready(size: Self.size, partSize: Self.part, prefix: Self.size, done: [1, 2, 3, 4], limit: 2) == [])
    }

    @Test func rangesFollowThePlan() {
        #expect(PartProgress.range(of: 1, size: Self.size, partSize: Self.part) == 0..<Self.part)
        #expect(PartProgress.range(of: 4, size: Self.size, partSize: Self.part) == (3 * Self.part)..<Self.size)
        let plan = PartPlan(size: Self.size, partSize: Self.part)
        #expect(plan.parts.map { $0.offset..<($0.offset + $0.length) }
            == (1...4).map { PartProgress.range(of: $0, size: Self.size, partSize: Self.part) })
    }

    @Test func partsAnywhereInTheWrittenRangesAreReady() {
        let p = Self.part
        // Four segments of a split download: the first has written half a part, the second a whole part, the
        // third nothing, the last is complete (with the short last part).
        let written: [Range<Int64>] = [0..<(p / 2), p..<(2 * p + 10), (3 * p)..<Self.size]
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: written, done: [], limit: 4) == [2, 4])
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: written, done: [2], limit: 4) == [4])
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: written, done: [], limit: 1) == [2])
        // A part straddling two segments is ready once both sides are written, in any order.
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: [(p + 5)..<(2 * p), p..<(p + 5)], done: [], limit: 4) == [2])
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: [(p + 1)..<(3 * p)], done: [], limit: 4) == [3])
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: [], done: [], limit: 4) == [])
        #expect(PartProgress.ready(size: Self.size, partSize: p, written: [0..<Self.size], done: [], limit: 0) == [])
    }

    @Test func splitRecordsUseEveryPartThatFitsThePlan() {
        #expect(PartProgress.usableParts(Self.record(parts: [1, 2, 4])).map(\.number) == [1, 2, 4])
        #expect(PartProgress.usableParts(Self.record(parts: [2, 3])).map(\.number) == [2, 3])
        var odd = Self.record(parts: [1, 2, 3])
        odd.parts[1].size -= 1
        #expect(PartProgress.usableParts(odd).map(\.number) == [1, 3], "a part of the wrong size is not used")
        var beyond = Self.record(parts: [1])
        beyond.parts.append(.init(number: 5, etag: "x", size: 100))
        #expect(PartProgress.usableParts(beyond).map(\.number) == [1], "a part past the plan is not used")
    }

    @Test func withoutAnIfRangeValidatorOnlyPartsContiguousFromTheFirstAreUsable() {
        #expect(PartProgress.usableParts(Self.record(parts: [1, 2, 4]), split: false).map(\.number) == [1, 2])
        #expect(PartProgress.usableParts(Self.record(parts: [2, 3]), split: false).isEmpty)
        var odd = Self.record(parts: [1, 2])
        odd.parts[1].size -= 1
        #expect(PartProgress.usableParts(odd, split: false).map(\.number) == [1], "a part of the wrong size ends the usable run")
    }

    @Test func aTakeOverRestoresWhatTheLocalBytesLack() {
        let p = Self.part
        let record = Self.record(parts: [1, 2, 3])
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size, localWritten: [])
            == .restore(parts: record.parts))
        #expect(PartProgress.handover(record, etag: nil, lastModified: nil, size: nil, localWritten: [])
            == .restore(parts: record.parts), "a job that knows no validators takes the record's")
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size, localWritten: [0..<(3 * p)])
            == .continueUpload)
        #expect(PartProgress.handover(Self.record(parts: []), etag: "\"v1\"", lastModified: nil, size: Self.size, localWritten: [])
            == .continueUpload)
        // Parts with gaps: local segments covering them all keep the upload; one missing restores them.
        let split = Self.record(parts: [1, 3, 4])
        #expect(PartProgress.handover(split, etag: "\"v1\"", lastModified: nil, size: Self.size,
                                      localWritten: [0..<(p + 3), (2 * p)..<Self.size]) == .continueUpload)
        #expect(PartProgress.handover(split, etag: "\"v1\"", lastModified: nil, size: Self.size, localWritten: [0..<(3 * p)])
            == .restore(parts: split.parts))
        #expect(PartProgress.handover(split, etag: "\"v1\"", lastModified: nil, size: Self.size, localWritten: [], split: false)
            == .restore(parts: [split.parts[0]]))
    }

    @Test func restoredRunsMapTheCompletedObjectOntoTheFile() {
        let p = Self.part
        let record = Self.record(parts: [1, 3, 4])
        let runs = PartProgress.restoreRuns(record.parts, size: Self.size, partSize: p)
        // The completed object is parts 1, 3 and 4 end to end: part 3 starts at p in the object, 2p in the file.
        #expect(runs == [
            .init(parts: 1...1, objectOffset: 0, file: 0..<p),
            .init(parts: 3...4, objectOffset: p, file: (2 * p)..<Self.size),
        ])
        #expect(runs[1].objectRange(of: 3, size: Self.size, partSize: p) == p...(2 * p - 1))
        #expect(runs[1].objectRange(of: 4, size: Self.size, partSize: p) == (2 * p)...(2 * p + 99))
        #expect(runs[0].objectRange(of: 1, size: Self.size, partSize: p) == 0...(p - 1))
        #expect(PartProgress.wholeFile(size: Self.size, partSize: p) == [.init(parts: 1...4, objectOffset: 0, file: 0..<Self.size)])
        #expect(PartProgress.wholeFile(size: Self.size, partSize: p) == PartProgress.restoreRuns(
            Self.record(parts: [1, 2, 3, 4]).parts, size: Self.size, partSize: p), "as if every part were recorded")
        #expect(PartProgress.restoreRuns([], size: Self.size, partSize: p).isEmpty)
        #expect(PartProgress.restoreRuns(Self.record(parts: [1, 2]).parts, size: Self.size, partSize: p)
            == [.init(parts: 1...2, objectOffset: 0, file: 0..<(2 * p))], "a prefix is one run")
    }

    @Test func anotherVersionOfTheFileDiscardsTheParts() {
        let record = Self.record(parts: [1, 2])
        #expect(PartProgress.handover(record, etag: "\"v2\"", lastModified: nil, size: Self.size, localWritten: [])
            == .discard(reason: "the file's validators changed"))
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size + 1, localWritten: [])
            == .discard(reason: "the file's size changed"))
        #expect(PartProgress.handover(Self.record(parts: [1], etag: nil), etag: nil, lastModified: nil, size: nil, localWritten: [])
            == .discard(reason: "nothing validates the stored parts"))
    }

    @Test func aRecordKeepsItsPartsInOrderAndReplacesARepeatedNumber() {
        var record = Self.record(parts: [])
        record.store(.init(number: 2, etag: "b", size: 1))
        record.store(.init(number: 1, etag: "a", size: 1))
        record.store(.init(number: 2, etag: "c", size: 1))
        #expect(record.parts.map(\.etag) == ["a", "c"])
    }

    /// Issue 33: a node that restored parts it could not copy stores them again before any part it fetched itself.
    @Test func restoredPartsAreUploadedBeforeTheOthers() {
        let size = 8 * Self.part
        let written: [Range<Int64>] = [0..<(2 * Self.part), (5 * Self.part)..<(7 * Self.part)]
        // Parts 6 and 7 were read back: they come first, then the lowest ready part.
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [], first: [6, 7], limit: 3) == [6, 7, 1])
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [6], first: [6, 7], limit: 2) == [7, 1])
        // A part already stored or in flight, not covered, or outside the file is never picked twice or at all.
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [1, 6, 7], first: [6, 7], limit: 2) == [2])
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [], first: [4, 9], limit: 1) == [1])
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [], first: [6], limit: 0) == [])
        // With nothing read back it is `ready`.
        #expect(PartProgress.next(size: size, partSize: Self.part, written: written, done: [1], first: [], limit: 4)
            == PartProgress.ready(size: size, partSize: Self.part, written: written, done: [1], limit: 4))
    }

    /// Issue 33: the ledger keeps the record a restore read from until the new upload holds every part read back, so
    /// a node killed while it stores them again costs the next one none of them.
    @Test func aNewUploadIsRecordedOnlyOnceItHoldsThePartsReadBack() {
        #expect(PartProgress.mayRecord(Self.record(parts: []), awaiting: []))
        #expect(PartProgress.mayRecord(nil, awaiting: []))
        #expect(!PartProgress.mayRecord(Self.record(parts: [1]), awaiting: [1, 2]))
        #expect(!PartProgress.mayRecord(nil, awaiting: [1]))
        #expect(PartProgress.mayRecord(Self.record(parts: [1, 2, 3]), awaiting: [1, 2]))
    }
}
