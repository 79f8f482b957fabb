import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("aria2 calls, secrets and errors")
struct Aria2CallTests {
    func value(_ text: String) throws -> RPCValue { try #require(RPCValue.parse(Array(text.utf8))) }

    @Test func gidIsSixteenHexDigitsOfTheIdsSHA256() {
        // printf %s 4gpaqjnlvyu2a26meedguddthg | sha256sum | cut -c1-16
        #expect(JobGID.of("4gpaqjnlvyu2a26meedguddthg") == "57b260132a28714d")
        #expect(JobGID.isWellFormed("57B260132A28714D"))
        #expect(!JobGID.isWellFormed("57b260132a28714") && !JobGID.isWellFormed("57b260132a28714g"))
    }

    @Test func theJobTableFindsAJobByGIDUntilItIsRemoved() {
        let table = JobTable()
        table.jobs["a"] = JobRecord(id: "a", url: "https://o.example/a", dedupeKey: "a", createdAt: Date())
        #expect(table.id(ofGID: JobGID.of("a")) == "a")
        table.jobs["a"] = JobRecord(id: "a", url: "https://o.example/b", dedupeKey: "a", createdAt: Date())
        #expect(table.id(ofGID: JobGID.of("a")) == "a")
        table.jobs.removeValue(forKey: "a")
        #expect(table.id(ofGID: JobGID.of("a")) == nil)
        table.jobs.updateValue(JobRecord(id: "b", url: "https://o.example/b", dedupeKey: "b", createdAt: Date()), forKey: "b")
        table.jobs["b"] = nil
        #expect(table.id(ofGID: JobGID.of("b")) == nil)
    }

    @Test func valuesRoundTripWithSortedKeys() throws {
        let parsed = try value(#"{"b":[1,2.5,"x",true,null],"a":{"z":false}}"#)
        #expect(parsed == .object(["b": .array([.int(1), .double(2.5), .string("x"), .bool(true), .null]),
                                   "a": .object(["z": .bool(false)])]))
        #expect(String(decoding: parsed.bytes, as: UTF8.self) == #"{"a":{"z":false},"b":[1,2.5,"x",true,null]}"#)
        #expect(RPCValue.parse(Array("xx".utf8)) == nil)
        #expect(RPCValue.parse(Array("{\"a\":".utf8)) == nil)
    }

    @Test func aCallNeedsAnIdAndAStringMethod() throws {
        #expect(throws: Aria2Call.Refusal(id: .null, error: .invalidRequest)) { try Aria2Call.parse(value(#"{"method":"m"}"#)) }
        #expect(throws: Aria2Call.Refusal(id: .int(1), error: .invalidRequest)) { try Aria2Call.parse(value(#"{"id":1,"method":5}"#)) }
        #expect(throws: Aria2Call.Refusal(id: .int(1), error: .invalidParams)) {
            try Aria2Call.parse(value(#"{"id":1,"method":"aria2.getVersion","params":{}}"#))
        }
        #expect(throws: Aria2Call.Refusal(id: .null, error: .invalidRequest)) { try Aria2Call.parse(.int(5)) }
        let call = try Aria2Call.parse(value(#"{"id":"a","method":"aria2.tellStatus","params":["token:s:x","0123456789abcdef"]}"#))
        #expect(call.secret == "s:x" && call.params.values == [.string("0123456789abcdef")] && call.id == .string("a"))
        let system = try Aria2Call.parse(value(#"{"id":1,"method":"system.listMethods","params":["token:s"]}"#))
        #expect(system.secret == nil && system.params.count == 1)
        let bare = try Aria2Call.parse(value(#"{"id":1,"method":"aria2.getVersion"}"#))
        #expect(bare.secret == nil && bare.params.count == 0)
    }

    @Test func parametersAreCheckedInAria2sWords() throws {
        let params = Aria2Params([.string("zz"), .int(3), .array([.string("gid"), .int(1)])])
        #expect(throws: Aria2Error("Invalid GID zz")) { try params.gid(0) }
        #expect(throws: Aria2Error("The parameter at 0 has wrong type.")) { try params.int(0) }
        #expect(throws: Aria2Error("The parameter at 2 has wrong type.")) { try params.strings(2) }
        #expect(throws: Aria2Error("The parameter at 5 is required but missing.")) { try params.string(5) }
        #expect(try params.int(1) == 3 && (try params.strings(7)) == nil)
        #expect(try Aria2Params([.string("0123456789ABCDEF")]).gid(0) == "0123456789abcdef")
        #expect(Aria2Error.negative(at: 1).message
            == "The integer parameter at 1 has invalid value: the value must be greater than or equal to 0.")
        #expect(Aria2Error.notFound(gid: "2089b05ecca3d829").message == "GID 2089b05ecca3d829 is not found")
    }

    static let key = KeyIdentity(id: "k1", name: "ci", scope: .write)

    func authorization(open: Bool = false, crossSite: Bool = false, bearer: AccessLevel? = nil) -> Aria2Authorization {
        Aria2Authorization(isOpen: open, crossSite: crossSite, bearer: bearer.map { .bearer($0) }) { secret in
            switch secret {
            case "T": .bearer(.full)
            case "R": .bearer(.readOnly)
            case "K": .key(Self.key)
            default: nil
            }
        }
    }

    func call(_ method: String, _ params: [RPCValue]) -> Aria2Call { Aria2Call(id: .int(1), method: method, params: params) }

    @Test func theSecretOrBearerDecidesAndTheReadTokenOnlyReads() throws {
        let guarded = authorization()
        #expect(throws: Aria2Error.unauthorized) { try guarded.check(call("aria2.tellActive", [])) }
        #expect(throws: Aria2Error.unauthorized) { try guarded.check(call("aria2.tellActive", [.string("token:X")])) }
        #expect(throws: Aria2Error.unauthorized) { try guarded.check(call("aria2.nope", [])) }
        _ = try guarded.check(call("aria2.addUri", [.string("token:T")]))
        _ = try guarded.check(call("aria2.tellActive", [.string("token:R")]))
        #expect(throws: Aria2Error.unauthorized) { try guarded.check(call("aria2.addUri", [.string("token:R")])) }
        _ = try guarded.check(call("system.listMethods", []))
        _ = try authorization(bearer: .full).check(call("aria2.pause", []))
        _ = try authorization(bearer: .readOnly).check(call("aria2.tellStatus", []))
        #expect(throws: Aria2Error.unauthorized) { try authorization(bearer: .readOnly).check(call("aria2.pause", [])) }
        // Cross-site requests pass only with a valid secret or bearer token.
        _ = try authorization(crossSite: true).check(call("aria2.pause", [.string("token:T")]))
        #expect(throws: Aria2Error.unauthorized) { try authorization(crossSite: true).check(call("aria2.pause", [])) }
        // An API key's secret runs the call as that key (its jobs only); the token as the administrator.
        #expect(try guarded.check(call("aria2.tellActive", [.string("token:K")])).onlyKey == "k1")
        #expect(try guarded.check(call("aria2.tellActive", [.string("token:T")])).onlyKey == nil)
    }

    @Test func openModeIgnoresTheSecretButRefusesOtherSites() throws {
        _ = try authorization(open: true).check(call("aria2.pause", []))
        _ = try authorization(open: true).check(call("aria2.pause", [.string("token:whatever")]))
        #expect(throws: Aria2Error.unauthorized) { try authorization(open: true, crossSite: true).check(call("aria2.pause", [])) }
    }

    @Test func getCallsCarryTheirParamsInBase64() throws {
        let params = Data(#"["token:T","a+b?"]"#.utf8).base64EncodedString()
        let call = try #require(Aria2Dispatcher.call(method: "aria2.getUris", id: "7", params: params))
        #expect(call.id == .string("7") && call.secret == "T" && call.params.values == [.string("a+b?")])
        // A query decoder's `+` → space, URL-safe letters and missing padding are all taken.
        let spaced = params.replacingOccurrences(of: "+", with: " ")
        #expect(Aria2Dispatcher.call(method: "aria2.x", id: "1", params: spaced)?.params == call.params)
        let urlSafe = params.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .trimmingCharacters(in: CharacterSet(charactersIn: "="))
        #expect(Aria2Dispatcher.call(method: "aria2.x", id: "1", params: urlSafe)?.params == call.params)
        #expect(Aria2Dispatcher.call(method: nil, id: "1", params: params) == nil)
        #expect(Aria2Dispatcher.call(method: "m", id: nil, params: params) == nil)
        #expect(Aria2Dispatcher.call(method: "m", id: "1", params: "!!!") == nil)
        #expect(Aria2Dispatcher.call(method: "m", id: "1", params: Data("{}".utf8).base64EncodedString()) == nil)
        #expect(Aria2Dispatcher.call(method: "m", id: "1", params: nil)?.params.count == 0)
    }

    @Test func answersKeepAria2sKeyOrder() {
        var json = JSONWriter()
        Aria2Dispatcher.write(id: .string("a"), .failure(.parse), into: &json)
        #expect(String(decoding: json.bytes, as: UTF8.self)
            == #"{"id":"a","jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error."}}"#)
        var ok = JSONWriter()
        Aria2Dispatcher.write(id: .int(2), .success(.string("OK")), into: &ok)
        #expect(String(decoding: ok.bytes, as: UTF8.self) == #"{"id":2,"jsonrpc":"2.0","result":"OK"}"#)
    }
}
