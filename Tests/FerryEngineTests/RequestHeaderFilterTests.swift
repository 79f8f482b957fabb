@testable import FerryEngine
import Testing

struct RequestHeaderFilterTests {
    @Test(arguments: ["Host", "range", "If-Range", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "TE",
                      "Trailer", "Upgrade", "Proxy-Authorization", "proxy-connection", "Expect", "", "Bad Name", "a:b", "x\r\ny"])
    func refused(_ name: String) {
        #expect(!RequestHeaderFilter.isAllowed(name: name))
    }

    @Test(arguments: ["Authorization", "Cookie", "User-Agent", "Accept", "X-Custom-Token", "If-None-Match"])
    func allowed(_ name: String) {
        #expect(RequestHeaderFilter.isAllowed(name: name))
    }

    @Test func linesKeepOrderAndDropInjection() {
        let lines = RequestHeaderFilter.lines([
            (name: "A", value: "1"), (name: "Host", value: "x"), (name: "B", value: "2\r\nEvil: 1"), (name: "C", value: "3"),
        ])
        #expect(lines == ["A: 1", "C: 3"])
    }
}
