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

    @Test func onlyPartsContiguousFromTheFirstAreUsable() {
        #expect(PartProgress.usableParts(Self.record(parts: [1, 2, 4])).map(\.number) == [1, 2])
        #expect(PartProgress.usableParts(Self.record(parts: [2, 3])).isEmpty)
        var odd = Self.record(parts: [1, 2])
        odd.parts[1].size -= 1
        #expect(PartProgress.usableParts(odd).map(\.number) == [1], "a part of the wrong size ends the usable run")
    }

    @Test func aTakeOverRestoresWhatReachesBeyondTheLocalBytes() {
        let record = Self.record(parts: [1, 2, 3])
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size, localBytes: 0)
            == .restore(parts: record.parts, bytes: 3 * Self.part))
        #expect(PartProgress.handover(record, etag: nil, lastModified: nil, size: nil, localBytes: 0)
            == .restore(parts: record.parts, bytes: 3 * Self.part), "a job that knows no validators takes the record's")
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size, localBytes: 3 * Self.part)
            == .continueUpload)
        #expect(PartProgress.handover(Self.record(parts: []), etag: "\"v1\"", lastModified: nil, size: Self.size, localBytes: 0)
            == .continueUpload)
    }

    @Test func anotherVersionOfTheFileDiscardsTheParts() {
        let record = Self.record(parts: [1, 2])
        #expect(PartProgress.handover(record, etag: "\"v2\"", lastModified: nil, size: Self.size, localBytes: 0)
            == .discard(reason: "the file's validators changed"))
        #expect(PartProgress.handover(record, etag: "\"v1\"", lastModified: nil, size: Self.size + 1, localBytes: 0)
            == .discard(reason: "the file's size changed"))
        #expect(PartProgress.handover(Self.record(parts: [1], etag: nil), etag: nil, lastModified: nil, size: nil, localBytes: 0)
            == .discard(reason: "nothing validates the stored parts"))
    }

    @Test func aRecordKeepsItsPartsInOrderAndReplacesARepeatedNumber() {
        var record = Self.record(parts: [])
        record.store(.init(number: 2, etag: "b", size: 1))
        record.store(.init(number: 1, etag: "a", size: 1))
        record.store(.init(number: 2, etag: "c", size: 1))
        #expect(record.parts.map(\.etag) == ["a", "c"])
    }
}
