@testable import FerryService
import Foundation
import Testing

/// What a client is told when its body does not decode: the field at fault in the API's words, never a Swift type
/// name, and a number no field can hold named as such rather than "not valid JSON" (issue 30).
@Suite struct RequestDecodingTests {
    private struct Body: Decodable {
        var maxBytesPerSecond: Int64?
        var priority: Int?
        var headers: [String: String]?
        var deliver: Deliver?
        struct Deliver: Decodable { var url: String }
    }

    private func message(_ json: String) -> String? {
        do {
            _ = try RequestDecoding.decode(Body.self, from: Array(json.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aNumberTooLargeForAnyFieldIsNamedWithItsField() {
        #expect(message(#"{"maxBytesPerSecond": 1e30}"#) == "'maxBytesPerSecond' is out of range: 1e+30 is beyond a 64-bit whole number")
    }

    @Test func aFractionIsNamedWithItsField() {
        #expect(message(#"{"priority": 1.5}"#) == "'priority' must be a whole number, not 1.5")
    }

    @Test func brokenJSONIsStillCalledThat() {
        #expect(message(#"{"priority": 1"#) == "the body is not valid JSON")
    }

    @Test func objectsAreCalledObjectsNotSwiftTypes() throws {
        let text = try #require(message(#"{"deliver": "x"}"#))
        #expect(text == "'deliver' must be an object", "\(text)")
        #expect(!text.contains("Dictionary") && !text.contains("<"))
    }

    @Test func theFinderWalksArraysAndNestedObjects() {
        let found = NumberOutOfPlace.find(in: Array(#"[{"a": 1}, {"b": {"c": [2, 2.25]}}]"#.utf8))
        #expect(found == NumberOutOfPlace(path: "[1].b.c[1]", text: "2.25", isFractional: true))
        #expect(NumberOutOfPlace.find(in: Array(#"{"a": 1000, "b": 1e3, "t": true}"#.utf8)) == nil)
    }
}
