import Testing
@testable import FerryEngine

@Suite("PartRestorePlan")
struct PartRestorePlanTests {
    static let part: Int64 = 5 << 20
    static let size = 4 * part + 100

    static func record(parts: [Int]) -> ObjectUploadRecord {
        ObjectUploadRecord(key: "jobs/a/f.bin", uploadID: "u1", partSize: part, etag: "\"v1\"", lastModified: nil, size: size,
                           parts: parts.map { .init(number: $0, etag: "\"e\($0)\"",
                                                    size: Int64(PartProgress.range(of: $0, size: size, partSize: part).count)) })
    }

    static func plan(_ parts: [Int]) -> PartRestorePlan {
        let record = record(parts: parts)
        return PartRestorePlan(record: record, parts: record.parts)
    }

    @Test func runsOfConsecutivePartsAreReadFromTheirConcatenation() {
        let p = Self.part, plan = Self.plan([1, 2, 4])
        #expect(plan.bytes == 3 * p)
        #expect(plan.runs.map(\.parts) == [1...2, 4...4])
        #expect(plan.runs.map(\.objectOffset) == [0, 2 * p])
        #expect(plan.runs.map(\.file) == [0..<(2 * p), (3 * p)..<(4 * p)])
        // Not a prefix: split with a validator, else only the run from byte 0 is read.
        #expect(plan.splitValidator("\"v1\"") == "\"v1\"")
        #expect(plan.splitValidator(nil) == nil)
        #expect(plan.runsToRead(split: true).count == 2)
        #expect(plan.runsToRead(split: false).map(\.parts) == [1...2])
    }

    @Test func aPrefixNeedsNoSplit() {
        let plan = Self.plan([1, 2])
        #expect(plan.splitValidator("\"v1\"") == nil)
        #expect(Self.plan([2, 3]).splitValidator("\"v1\"") == "\"v1\"")
    }

    @Test func theObjectFoundIsThePartsOrTheWholeFile() {
        var parts = Self.plan([1, 3])
        let foundParts = parts.objectFound(size: 2 * Self.part)
        #expect(foundParts)
        #expect(parts.runs.map(\.parts) == [1...1, 3...3])
        var whole = Self.plan([1, 3])
        let foundWhole = whole.objectFound(size: Self.size)
        #expect(foundWhole)
        #expect(whole.runs == [PartProgress.RestoreRun(parts: 1...5, objectOffset: 0, file: 0..<Self.size)])
        #expect(whole.splitValidator("\"v1\"") == nil)
        var other = Self.plan([1, 3])
        let foundOther = other.objectFound(size: Self.part)
        #expect(!foundOther)
        #expect(other.runs.map(\.parts) == [1...1, 3...3])
    }

    @Test func onlyPartsReadBackWholeAreCopiedOrAwaited() {
        let p = Self.part, plan = Self.plan([1, 2, 4])
        // Part 2 was read only halfway; part 4 whole.
        let restored: [Range<Int64>] = [0..<(p + p / 2), (3 * p)..<(4 * p)]
        #expect(plan.readBack(restored) == [1, 4])
        let copies = plan.copies(restored)
        #expect(copies.map(\.part) == [1, 4])
        #expect(copies.map(\.source) == [0...(p - 1), (2 * p)...(3 * p - 1)])
        var stored = Self.record(parts: [])
        #expect(plan.awaiting(restored, stored: nil) == [1, 4])
        stored.store(.init(number: 1, etag: "\"c1\"", size: p))
        #expect(plan.awaiting(restored, stored: stored) == [4])
    }
}
