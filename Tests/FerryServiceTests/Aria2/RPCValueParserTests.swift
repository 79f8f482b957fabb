import Foundation
import Testing
@testable import FerryService

/// `RPCValueParser` reads the JSON clients send as `JSONDecoder` would, and leaves everything else to it: whatever it
/// reads equals `JSONDecoder`'s value, so `RPCValue.parse` answers as before.
@Suite("aria2 call JSON read without JSONDecoder")
struct RPCValueParserTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The parser's value for `text`, checked against `JSONDecoder`'s whenever the parser gives one.
    func parsed(_ text: [UInt8]) -> RPCValue? {
        let value = RPCValueParser.parse(text)
        if let value { #expect(value == RPCValue.decoded(text), "\(String(decoding: text, as: UTF8.self))") }
        #expect(RPCValue.parse(text) == RPCValue.decoded(text))
        return value
    }

    @Test func readsWhatClientsSend() throws {
        let poll = #"{"jsonrpc":"2.0","id":"3","method":"aria2.tellStopped","params":["token:s\/e\"c",-1,1000,"#
            + #"["gid","totalLength","status"]]}"#
        let value = try #require(parsed(bytes(poll)))
        let call = try Aria2Call.parse(value)
        #expect(call.method == "aria2.tellStopped" && call.secret == #"s/e"c"# && call.id == .string("3"))
        #expect(call.params.values == [.int(-1), .int(1000), .array(["gid", "totalLength", "status"].map(RPCValue.string))])
        let batch = " [ {\"id\" : 1 , \"method\":\"system.multicall\",\"params\":[[{\"methodName\":\"aria2.addUri\","
            + "\"params\":[[\"http://h/ü\"],{\"out\":\"a\\tb\",\"split\":\"2\"}]}]]}, true, null, false, {} ,[]]\n"
        #expect(parsed(bytes(batch))?.array?.count == 6)
        #expect(parsed(bytes("-9223372036854775808")) == .int(.min))
        #expect(parsed(bytes("9223372036854775807")) == .int(.max))
        #expect(parsed(bytes("0")) == .int(0))
    }

    @Test func leavesTheRestToJSONDecoder() {
        let others = ["", " ", "1.5", "1e3", "1E3", "-0", "01", "-", "9223372036854775808", "-9223372036854775809",
                      #""\u00e9""#, #""\ud83d\ude00""#, "\"a\u{01}b\"", #""\x""#, #"{"a":1,"a":2}"#, "[1,]", "[1 2]",
                      "{\"a\" 1}", "{\"a\":1,}", "{1:2}", "tru", "nul", "[", "]", "\"open", "1 2", "\u{FEFF}{}",
                      "[" + String(repeating: "[", count: 70) + String(repeating: "]", count: 71), "NaN", "'a'"]
        for text in others { #expect(parsed(bytes(text)) == nil, "\(text)") }
        #expect(parsed([0x22, 0xC3, 0x28, 0x22]) == nil, "not UTF-8")
        #expect(parsed([0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00]) == nil, "UTF-16")
    }

    @Test func agreesWithJSONDecoderOnMutatedCalls() {
        var generator = SeededGenerator(seed: 27)
        let seeds = [#"{"jsonrpc":"2.0","id":"q","method":"aria2.tellWaiting","params":["token:x",0,1000,["gid"]]}"#,
                     #"[{"id":1,"method":"aria2.getGlobalStat"},{"id":null,"method":"x","params":[true,false,-7]}]"#,
                     #"{"a":{"b":[1,"\n\"\\\/",{"c":[]}]},"d":-12}"#]
        let alphabet = Array(#"{}[]",:0123456789-.eE\/"tfnrul aé"#.utf8)
        var read = 0
        for seed in seeds {
            for _ in 0..<400 {
                var text = bytes(seed)
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let at = Int.random(in: 0..<text.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: text.remove(at: at)
                    case 1: text.insert(alphabet.randomElement(using: &generator)!, at: at)
                    default: text[at] = alphabet.randomElement(using: &generator)!
                    }
                }
                if parsed(text) != nil { read += 1 }
            }
        }
        #expect(read > 50, "some mutations are still JSON the parser reads")
    }
}
