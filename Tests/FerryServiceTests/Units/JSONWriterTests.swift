import Foundation
import Testing
@testable import FerryService

@Suite("JSON writer")
struct JSONWriterTests {
    @Test func writesNestedValuesInOrderWithExplicitNulls() throws {
        var json = JSONWriter()
        json.beginObject()
        json.field("s", "a\"b\\c\n\u{1}é")
        json.field("n", Int64(-5))
        json.field("missing", nil as String?)
        json.field("d", 1.5)
        json.field("whole", 2.0)
        json.key("list")
        json.beginArray(); json.int(1); json.bool(true); json.null(); json.endArray()
        json.field("inf", Double.infinity)
        json.endObject()
        let text = String(decoding: json.bytes, as: UTF8.self)
        #expect(text == #"{"s":"a\"b\\c\n\u0001é","n":-5,"missing":null,"d":1.5,"whole":2,"list":[1,true,null],"inf":null}"#)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
        #expect(parsed["s"] as? String == "a\"b\\c\n\u{1}é")
    }
}
