import Testing
@testable import FerryEngine

@Suite("PartPlan")
struct PartPlanTests {
    static let mebibyte: Int64 = 1 << 20

    @Test func cutsIntoPartsOfTheChosenSizeWithAShorterLastOne() {
        let plan = PartPlan(size: 40 * Self.mebibyte + 3, partSize: 16 * Self.mebibyte)
        #expect(plan.parts.map(\.number) == [1, 2, 3])
        #expect(plan.parts.map(\.offset) == [0, 16 * Self.mebibyte, 32 * Self.mebibyte])
        #expect(plan.parts.map(\.length) == [16 * Self.mebibyte, 16 * Self.mebibyte, 8 * Self.mebibyte + 3])
    }

    @Test func aSmallFileIsOnePartAndAnEmptyOneNone() {
        #expect(PartPlan(size: 10, partSize: 16 * Self.mebibyte).parts == [.init(number: 1, offset: 0, length: 10)])
        #expect(PartPlan(size: 0, partSize: 16 * Self.mebibyte).parts.isEmpty)
    }

    @Test func neverBelowFiveMebibytesNorAboveTenThousandParts() {
        #expect(PartPlan(size: 12 * Self.mebibyte, partSize: 1).parts.map(\.length) == [5 * Self.mebibyte, 5 * Self.mebibyte, 2 * Self.mebibyte])
        let huge = PartPlan(size: 200_000 * Self.mebibyte, partSize: 16 * Self.mebibyte)
        #expect(huge.parts.count <= 10_000)
        #expect(huge.parts.reduce(0) { $0 + $1.length } == 200_000 * Self.mebibyte)
        #expect(huge.parts.last?.number == huge.parts.count)
    }
}
