import Testing
@testable import FerryCore

@Suite struct AddressClassTests {
    @Test func rawValuesAreStableLabels() {
        #expect(AddressClass.public.rawValue == "public")
        #expect(AddressClass.private.rawValue == "private")
        #expect(AddressClass.sharedCGNAT.rawValue == "sharedCGNAT")
        #expect(AddressClass(rawValue: "linkLocal") == .linkLocal)
        #expect(AddressClass(rawValue: "ipv4Mapped") == .ipv4Mapped)
        #expect(AddressClass(rawValue: "nonsense") == nil)
    }
}
