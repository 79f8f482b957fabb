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

    @Test func aDownloadAPartPerConnectionAheadOfTheStoredPartsIsHeld() {
        let part = Self.part, size = 10 * Self.part
        func next(_ written: [Range<Int64>], pending: Int64 = 0, connections: Int? = 4,
                  _ state: PartUploadPlanner.State) -> PartUploadPlanner.Step {
            PartUploadPlanner.next(size: size, preferredPartSize: part, etag: "\"v1\"", lastModified: nil, written: written,
                                   pending: pending, connections: connections, state: state, now: 100)
        }
        let record = Self.record(parts: [1], size: size)
        // Four connections: part 1 stored, part 2 uploading, part 4 written, two segments under a part in, and bytes
        // not yet written: 4 parts unstored hold the download, though no part waits for a slot.
        let written = [0..<(2 * part), (3 * part)..<(4 * part), (6 * part)..<(6 * part + part / 2), (8 * part)..<(8 * part + 10)]
        let ahead = part + part / 2 - 10
        #expect(next(written, pending: ahead, .init(record: record, inFlight: [2])) == .upload(parts: [4], backlogged: true))
        #expect(next(written, pending: ahead, .init(record: record, inFlight: [2, 4])) == .upload(parts: [], backlogged: true))
        #expect(next(written, pending: ahead - 1, .init(record: record, inFlight: [2, 4])) == .wait)
        // Without a lookahead (nil) only a waiting part holds it.
        #expect(next(written, pending: 4 * part, connections: nil, .init(record: record, inFlight: [2, 4])) == .wait)
        // Nothing in flight and nothing ready: never held (no upload's end would wake it).
        let partial = [0..<part, (2 * part + 1)..<(3 * part), (4 * part + 1)..<(5 * part), (6 * part + 1)..<(7 * part)]
        #expect(next(partial, pending: 4 * part, .init(record: record)) == .wait)
        #expect(next(partial, pending: 4 * part, .init(record: record, inFlight: [9])) == .upload(parts: [], backlogged: true))
        // Parts a restore read back count as stored (the ledger's record still names them).
        #expect(next([0..<(4 * part)], connections: 1, .init(record: Self.record(parts: [1, 2], size: size), inFlight: [3],
                                                            awaiting: [3, 4])) == .upload(parts: [4], backlogged: false))
        #expect(next([0..<(4 * part)], connections: 1, .init(record: Self.record(parts: [1, 2], size: size), inFlight: [3]))
            == .upload(parts: [4], backlogged: true))
        // Failing uploads hold nothing.
        #expect(next(written, pending: 4 * part, .init(record: record, inFlight: [2], failures: 1))
            == .upload(parts: [4], backlogged: false))
        // One connection may be two parts ahead: one uploading, the next written meanwhile.
        let one = PartUploadPlanner.State(record: record, inFlight: [2])
        #expect(next([0..<(3 * part - 1)], connections: 1, one) == .wait)
        #expect(next([0..<(3 * part - 1)], pending: 1, connections: 1, one) == .upload(parts: [], backlogged: true))
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
