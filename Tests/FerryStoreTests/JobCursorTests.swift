import Foundation
import Testing
@testable import FerryStore

@Suite("JobCursor")
struct JobCursorTests {
    @Test(arguments: [Int64(0), 1, 9, 10, 999, 1_000_000, Int64.max])
    func roundTrips(sequence: Int64) throws {
        let text = JobCursor(sequence: sequence).encoded
        #expect(try JobCursor(decoding: text).sequence == sequence)
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })  // URL-safe, no padding
    }

    @Test func encodingIsBase64URLOfTheSequence() {
        #expect(JobCursor(sequence: 1).encoded == "czox")
        #expect(JobCursor(sequence: 10).encoded == "czoxMA")
    }

    @Test(arguments: [
        "", "czox=", "czox==", "czo", "cz+x", "czowMTA",  // s:010
        "czotMQ",  // s:-1
        "czoxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1",  // s:1234567890123456789012345 (overflows Int64)
        "cGFnZT0y",  // page=2
        "MTIz",  // 123 without the prefix
        "czox czox", "czox\n",
    ])
    func rejectsWhatItDidNotMake(text: String) {
        #expect(throws: JobStoreError.invalidCursor(text)) { try JobCursor(decoding: text) }
    }
}
