import FerryCore
import Testing

@Suite("CIDR blocks and the narrow allow list")
struct IPNetworkTests {
    @Test(arguments: ["127.0.0.1/32", "10.1.0.0/16", "0.0.0.0/0", "::1/128", "fd00::/8", "127.0.0.1", "::1", "[::1]/128"])
    func parses(_ text: String) {
        #expect(IPNetwork(text) != nil)
    }

    @Test(arguments: ["10.1.2.3/16", "127.0.0.1/33", "::1/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "localhost/32",
                      "127.1/32", "10.0.0.0/8/8", "", "/8", "fd00::1/8"])
    func refusesWhatCouldOpenMoreThanWritten(_ text: String) {
        #expect(IPNetwork(text) == nil)
    }

    @Test func containsByPrefix() throws {
        let block = try #require(IPNetwork("10.1.0.0/16"))
        #expect(block.contains(IPAddress("10.1.255.7")!))
        #expect(!block.contains(IPAddress("10.2.0.1")!))
        let odd = try #require(IPNetwork("192.168.4.0/22"))
        #expect(odd.contains(IPAddress("192.168.7.255")!) && !odd.contains(IPAddress("192.168.8.0")!))
        let host = try #require(IPNetwork("127.0.0.1/32"))
        #expect(host.contains(IPAddress("127.0.0.1")!) && !host.contains(IPAddress("127.0.0.2")!))
        // The IPv6 forms of an IPv4 address are that address; other IPv6 addresses are not in an IPv4 block.
        #expect(host.contains(IPAddress("::ffff:127.0.0.1")!))
        #expect(!host.contains(IPAddress("::1")!))
        let v6 = try #require(IPNetwork("fd00::/8"))
        #expect(v6.contains(IPAddress("fd12::3")!) && !v6.contains(IPAddress("fe80::1")!) && !v6.contains(IPAddress("10.0.0.1")!))
        #expect(block.description == "10.1.0.0/16" && IPNetwork("::1")!.description == "::1/128")
    }

    @Test func allowListOpensOnlyItsBlocks() throws {
        let policy = AddressPolicy(allowedNetworks: [try #require(IPNetwork("127.0.0.1/32"))])
        #expect(policy.allows(IPAddress("127.0.0.1")!))
        #expect(!policy.allows(IPAddress("127.0.0.2")!))
        #expect(!policy.allows(IPAddress("10.0.0.1")!))
        #expect(!policy.allows(IPAddress("::1")!))
        #expect(policy.allows(IPAddress("93.184.215.14")!))
        #expect(policy.refusal(of: IPAddress("10.0.0.1")!)?.contains("private") == true)
        #expect(policy.refusal(ofName: "localhost") == nil)
        #expect(AddressPolicy().refusal(ofName: "localhost") != nil && AddressPolicy().refusal(ofName: "example.com") == nil)
        #expect(policy.openedDescription == "127.0.0.1/32" && AddressPolicy().openedDescription == nil)
    }

    @Test func unspecifiedIsNeverAllowed() throws {
        let everything = AddressPolicy(allowPrivateNetworks: true, allowedNetworks: [try #require(IPNetwork("0.0.0.0/0"))])
        #expect(!everything.allows(IPAddress("0.0.0.0")!))
        #expect(!everything.allows(IPAddress("::")!))
        #expect(!everything.allows(IPAddress("::ffff:0.0.0.1")!))
        #expect(everything.allows(IPAddress("10.0.0.1")!))
    }
}
