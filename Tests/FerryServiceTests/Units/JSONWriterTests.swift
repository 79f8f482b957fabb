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

@Suite("JSON writer, fast paths")
struct JSONWriterFastPathTests {
    @Test func commasAcrossNestedContainers() {
        var json = JSONWriter()
        json.beginArray()
        json.beginObject(); json.field("a", 1); json.key("b"); json.beginArray(); json.endArray(); json.endObject()
        json.beginObject(); json.endObject()
        json.beginArray(); json.beginArray(); json.int(0); json.endArray(); json.int(9); json.endArray()
        json.string("x")
        json.endArray()
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"[{"a":1,"b":[]},{},[[0],9],"x"]"#)
    }

    @Test func integersAtTheEdges() {
        var json = JSONWriter()
        json.beginArray()
        for value: Int64 in [0, 7, 10, -1, -10, 1_234_567_890, .max, .min] { json.int(value) }
        json.double(-3.0)
        json.double(0.25)
        json.endArray()
        #expect(String(decoding: json.bytes, as: UTF8.self)
            == "[0,7,10,-1,-10,1234567890,9223372036854775807,-9223372036854775808,-3,0.25]")
    }

    @Test func escapesAtEveryPositionAndCopiesPlainRuns() {
        let cases: [(String, String)] = [
            ("", #""""#),
            ("plain ascii /api/v1?x=1", #""plain ascii /api/v1?x=1""#),
            ("\"start", #""\"start""#),
            ("end\\", #""end\\""#),
            ("a\tb\rc\u{7F}d\u{1F}", #""a\tb\rc\u007fd\u001f""#),
            ("日本語 ✓", "\"日本語 ✓\""),
        ]
        for (input, expected) in cases {
            var json = JSONWriter()
            json.string(input)
            #expect(String(decoding: json.bytes, as: UTF8.self) == expected, "\(input)")
        }
    }
}
