import Foundation
import Testing
@testable import FerryService

/// `TopLevelJSONString`: the `state` of a job event read without a whole parse, and where it declines.
@Suite("TopLevelJSONString")
struct TopLevelJSONStringTests {
    private func state(_ json: String) -> String? { TopLevelJSONString.value(of: "state", in: Array(json.utf8)) }

    @Test func findsTheTopLevelMemberPastNestedOnes() {
        #expect(state(#"{"id":"a","state":"finished"}"#) == "finished")
        #expect(state(#" { "delivery" : {"state":"pending","x":[1,{"state":"no"}]}, "n": -1.5e3, "ok": true, "z": null,"#
                      + #" "s": "a \"}\" b", "state" : "downloading" } "#) == "downloading")
        #expect(state(#"{"tags":["state","}"],"state":"paused"}"#) == "paused")
    }

    @Test func declinesWhatItCannotSay() {
        #expect(state(#"{"id":"a"}"#) == nil)
        #expect(state(#"{"delivery":{"state":"pending"}}"#) == nil)
        #expect(state(#"{"state":3}"#) == nil)
        #expect(state(#"{"state":"fin\u0069shed"}"#) == nil)  // escaped: the caller parses it whole
        #expect(state(#"["state","finished"]"#) == nil)
        #expect(state(#"{"state""#) == nil)
        #expect(state("") == nil)
    }

    @Test func agreesWithAWholeParseOfARenderedJob() throws {
        var json = JSONWriter()
        json.beginObject()
        json.field("id", "j1")
        json.field("filename", "a \"quoted\" {name}.bin")
        json.field("state", "failed")
        json.endObject()
        let parsed = try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any]
        #expect(TopLevelJSONString.value(of: "state", in: json.bytes) == parsed?["state"] as? String)
        #expect(ClusterEventFeed.state(of: Array(#"{"state":"fin\u0069shed"}"#.utf8)) == "finished")
    }
}
