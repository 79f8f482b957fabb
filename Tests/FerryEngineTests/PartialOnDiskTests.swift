@testable import FerryEngine
import Testing

/// `PartialOnDisk.judge`: what a kept partial file is worth, from its size and its segment sidecar.
struct PartialOnDiskTests {
    private let table = SegmentTable.plan(total: 1000, from: 0, count: 2)

    private func sidecarText(validator: String = "\"v\"", total: Int64 = 1000) -> String {
        SegmentSidecar(validator: validator, table: SegmentTable.plan(total: total, from: 0, count: 2)).encoded()
    }

    @Test func withoutASidecarTheBytesAreAContiguousPrefix() {
        let found = PartialOnDisk.judge(sidecar: nil, size: 700, validator: "\"v\"", total: 1000)
        #expect(found == .contiguous(bytes: 700))
        #expect(found.bytesKept == 700)
    }

    @Test func aSidecarThatFitsMakesASegmentedDownload() {
        let found = PartialOnDisk.judge(sidecar: sidecarText(), size: 1000, validator: "\"v\"", total: 1000)
        #expect(found == .segmented(SegmentSidecar(validator: "\"v\"", table: table)))
        #expect(found.bytesKept == table.bytesWritten)
        // Neither validator nor total given: only the size must fit.
        #expect(PartialOnDisk.judge(sidecar: sidecarText(), size: 1000, validator: nil, total: nil) == .segmented(SegmentSidecar(validator: "\"v\"", table: table)))
    }

    @Test func aSidecarThatDoesNotFitDiscardsTheBytes() {
        let unreadable = PartialOnDisk.judge(sidecar: "ferry-segments 1\ntotal", size: 1000, validator: nil, total: nil)
        #expect(unreadable == .discarded(reason: "the saved segment state is unreadable"))
        #expect(unreadable.bytesKept == 0)
        let mismatch = PartialOnDisk.discarded(reason: "the saved segment state does not match the file")
        #expect(PartialOnDisk.judge(sidecar: sidecarText(), size: 999, validator: nil, total: nil) == mismatch)
        #expect(PartialOnDisk.judge(sidecar: sidecarText(), size: 1000, validator: "\"w\"", total: nil) == mismatch)
        #expect(PartialOnDisk.judge(sidecar: sidecarText(), size: 1000, validator: nil, total: 2000) == mismatch)
    }
}
