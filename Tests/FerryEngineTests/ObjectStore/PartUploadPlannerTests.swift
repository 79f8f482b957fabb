import Testing
@testable import FerryEngine

@Suite("PartUploadPlanner")
struct PartUploadPlannerTests {
    static let part: Int64 = 5 << 20
    static let size = 4 * part + 100

    static func record(parts: [Int], etag: String? = "\"v1\"", size: Int64 = size) -> ObjectUploadRecord {
        ObjectUploadRecord(key: "jobs/a/f.bin", uploadID: "u1", partSize: part, etag: etag, lastModified: nil, size: size,
                           parts: parts.map { .init(number: $0, etag: "\"e\($0)\"",
                                                    size: Int64(PartProgress.range(of: $0, size: size, partSize: part).count)) })
    }

    static func next(written: [Range<Int64>], _ state: PartUploadPlanner.State, etag: String? = "\"v1\"",
                     size: Int64 = size, now: Double = 100) -> PartUploadPlanner.Step {
        PartUploadPlanner.next(size: size, preferredPartSize: part, etag: etag, lastModified: nil, written: written,
                               state: state, now: now)
    }

    @Test func theUploadIsCreatedOnceAFirstPartIsReady() {
        #expect(Self.next(written: [0..<(Self.part - 1)], .init()) == .wait)
        #expect(Self.next(written: [0..<Self.part], .init()) == .create(partSize: Self.part))
        // A later segment's part counts as much as the prefix.
        #expect(Self.next(written: [(2 * Self.part)..<(3 * Self.part)], .init()) == .create(partSize: Self.part))
        // Not while a create is in flight, nor during the back-off.
        #expect(Self.next(written: [0..<Self.part], .init(creating: true)) == .wait)
        #expect(Self.next(written: [0..<Self.part], .init(notBefore: 100.5), now: 100) == .wait)
        #expect(Self.next(written: [0..<Self.part], .init(notBefore: 100.5), now: 100.5) == .create(partSize: Self.part))
    }

    @Test func aFileOfOnePartIsStoredAtItsFinish() {
        #expect(Self.next(written: [0..<Self.part], .init(), size: Self.part) == .wait)
        #expect(Self.next(written: [0..<100], .init(), size: 100) == .wait)
        #expect(Self.next(written: [0..<(Self.part + 1)], .init(), size: Self.part + 1) == .create(partSize: Self.part))
    }

    @Test func readyPartsAreUploadedWithinTheInFlightLimit() {
        let all = [0..<Self.size]
        #expect(Self.next(written: all, .init(record: Self.record(parts: []))) == .upload(parts: [1, 2], backlogged: true))
        #expect(Self.next(written: all, .init(record: Self.record(parts: [1]), inFlight: [2]))
            == .upload(parts: [3], backlogged: true))
        // Every slot taken: nothing started, the download held while the uploads run.
        #expect(Self.next(written: all, .init(record: Self.record(parts: []), inFlight: [1, 2]))
            == .upload(parts: [], backlogged: true))
        // The last ready parts fill the slots: nothing waits, the download is not held.
        #expect(Self.next(written: all, .init(record: Self.record(parts: [1, 2, 3])))
            == .upload(parts: [4, 5], backlogged: false))
        #expect(Self.next(written: all, .init(record: Self.record(parts: [1, 2, 3, 4, 5]))) == .wait)
    }

    @Test func failingUploadsNeverHoldTheDownload() {
        let state = PartUploadPlanner.State(record: Self.record(parts: []), inFlight: [1, 2], failures: 1)
        #expect(Self.next(written: [0..<Self.size], state) == .wait)
        let free = PartUploadPlanner.State(record: Self.record(parts: []), failures: 2)
        #expect(Self.next(written: [0..<Self.size], free) == .upload(parts: [1, 2], backlogged: false))
    }

    @Test func partsARestoreReadBackGoFirst() {
        let state = PartUploadPlanner.State(record: Self.record(parts: []), awaiting: [4, 3])
        #expect(Self.next(written: [0..<Self.size], state) == .upload(parts: [3, 4], backlogged: true))
    }

    @Test func anUploadOfOtherValidatorsOrSizeTakesNoPart() {
        #expect(Self.next(written: [0..<Self.size], .init(record: Self.record(parts: [], etag: "\"v2\""))) == .wait)
        #expect(Self.next(written: [0..<Self.size], .init(record: Self.record(parts: [], size: Self.size + 1))) == .wait)
    }

    @Test func theBackOffDoublesUpToThirtySeconds() {
        #expect((1...9).map { PartUploadPlanner.retryDelay(failures: $0) } == [0.5, 1, 2, 4, 8, 16, 30, 30, 30])
    }
}
