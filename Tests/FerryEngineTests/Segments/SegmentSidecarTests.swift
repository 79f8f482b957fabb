@testable import FerryEngine
import Testing

struct SegmentSidecarTests {
    @Test func roundTripsACompactedTable() throws {
        var table = SegmentTable.plan(total: 1_000, from: 0, count: 4)
        table.recordWritten(start: 0, upTo: 250)
        table.recordWritten(start: 250, upTo: 300)
        table.recordWritten(start: 750, upTo: 760)
        let sidecar = SegmentSidecar(validator: "\"abc-123\"", table: table)
        let text = sidecar.encoded()
        #expect(text == """
            ferry-segments 1
            total 1000
            validator "abc-123"
            segment 0 500 300
            segment 500 750 500
            segment 750 1000 760

            """)
        let decoded = try #require(SegmentSidecar.decode(text))
        #expect(decoded.validator == "\"abc-123\"")
        #expect(decoded.table == table.compacted())
        #expect(decoded.table.bytesWritten == table.bytesWritten)
    }

    @Test func keepsALastModifiedValidatorWithSpaces() throws {
        let sidecar = SegmentSidecar(validator: "Tue, 14 Nov 2023 22:13:20 GMT", table: .plan(total: 10, from: 0, count: 2))
        #expect(try #require(SegmentSidecar.decode(sidecar.encoded())).validator == "Tue, 14 Nov 2023 22:13:20 GMT")
    }

    @Test func rejectsMalformedOrTornText() {
        let good = SegmentSidecar(validator: "\"v\"", table: .plan(total: 100, from: 0, count: 2)).encoded()
        #expect(SegmentSidecar.decode(good) != nil)
        #expect(SegmentSidecar.decode(String(good.dropLast())) == nil)  // torn: no final newline
        #expect(SegmentSidecar.decode(String(good.prefix(30))) == nil)
        #expect(SegmentSidecar.decode("") == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "ferry-segments 1", with: "ferry-segments 2")) == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "total 100", with: "total 101")) == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "segment 50 100 50", with: "segment 50 100 101")) == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "segment 50 100 50", with: "segment 50 100")) == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "validator \"v\"", with: "validator ")) == nil)
        #expect(SegmentSidecar.decode(good.replacingOccurrences(of: "segment 0 50 0\n", with: "")) == nil)
    }
}
