import FerryCore
import Testing

@Suite("Proxy setting and destination pins")
struct ProxySettingTests {
    @Test func parsesTheThreeKindsAndHidesCredentials() throws {
        let http = try ProxySetting(parsing: " http://user:p%40ss@proxy.example:3128/ ")
        #expect(http.kind == .http && http.host == "proxy.example" && http.port == 3128 && http.tunnels)
        #expect(http.url == "http://user:p%40ss@proxy.example:3128")
        #expect(http.redacted == "http://***@proxy.example:3128" && "\(http)" == http.redacted)
        let socks = try ProxySetting(parsing: "SOCKS5H://[::1]:1080")
        #expect(socks.kind == .socks5h && socks.host == "::1" && !socks.tunnels && socks.url == "socks5h://[::1]:1080")
        #expect(try ProxySetting(parsing: "https://10.0.0.1:443").redacted == "https://10.0.0.1:443")
    }

    @Test func refusesWhatIsNotAProxyWithoutEchoingCredentials() {
        for text in ["proxy:3128", "socks5://p:1080", "socks4://p:1080", "ftp://p:21", "http://p", "http://p:0",
                     "http://p:99999", "http://user:pw@:3128", "http://p:3128/path", "http://[::1:3128"] {
            do {
                _ = try ProxySetting(parsing: text)
                Issue.record("accepted \(text)")
            } catch {
                if case .invalid(let message) = error { #expect(!message.contains("pw"), "\(message)") }
            }
        }
    }

    @Test func pinsTheFirstAllowedAddressOrSaysWhyNone() {
        var policy = AddressPolicy()
        policy.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
        let v6 = IPAddress("::1")!, v4 = IPAddress("127.0.0.1")!
        let pin = try? DestinationPin.choose(host: "localhost", port: 80, addresses: [v6, v4], policy: policy).get()
        #expect(pin == DestinationPin(host: "localhost", port: 80, address: v4))
        #expect(pin?.connectTo == "localhost:80:127.0.0.1:80" && pin?.key == "localhost:80")
        #expect(DestinationPin(host: "[::2]", port: 8080, address: IPAddress("2001:db8::2")!).connectTo == "[::2]:8080:[2001:db8::2]:8080")
        guard case .failure(.forbidden(let why)) = DestinationPin.choose(host: "h", port: 80, addresses: [v6], policy: policy) else {
            Issue.record("::1 was pinned"); return
        }
        #expect(why.hasPrefix("h: "))
        #expect(DestinationPin.choose(host: "h", port: 80, addresses: [], policy: policy) == .failure(.unresolved("h resolved to no address")))
    }
}
