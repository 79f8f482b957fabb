import Testing
@testable import FerryCore

@Suite struct AddressPolicyTests {
    static let cases: [(String, AddressClass)] = [
        // IPv4, each range at both edges where it matters.
        ("0.0.0.0", .unspecified), ("0.255.255.255", .unspecified), ("0.1.2.3", .unspecified),
        ("1.0.0.0", .public), ("8.8.8.8", .public), ("9.255.255.255", .public),
        ("10.0.0.0", .private), ("10.255.255.255", .private), ("11.0.0.0", .public),
        ("100.63.255.255", .public), ("100.64.0.0", .sharedCGNAT), ("100.127.255.255", .sharedCGNAT), ("100.128.0.0", .public),
        ("126.255.255.255", .public), ("127.0.0.1", .loopback), ("127.255.255.255", .loopback), ("128.0.0.0", .public),
        ("169.253.255.255", .public), ("169.254.0.0", .linkLocal), ("169.254.169.254", .linkLocal), ("169.255.0.0", .public),
        ("172.15.255.255", .public), ("172.16.0.0", .private), ("172.31.255.255", .private), ("172.32.0.0", .public),
        ("192.0.0.0", .reserved), ("192.0.0.255", .reserved), ("192.0.1.0", .public),
        ("192.0.2.0", .documentation), ("192.0.2.255", .documentation), ("192.0.3.0", .public),
        ("192.88.98.255", .public), ("192.88.99.1", .reserved), ("192.88.100.0", .public),
        ("192.167.255.255", .public), ("192.168.0.0", .private), ("192.168.255.255", .private), ("192.169.0.0", .public),
        ("198.17.255.255", .public), ("198.18.0.0", .benchmarking), ("198.19.255.255", .benchmarking), ("198.20.0.0", .public),
        ("198.51.99.255", .public), ("198.51.100.7", .documentation), ("198.51.101.0", .public),
        ("203.0.112.255", .public), ("203.0.113.9", .documentation), ("203.0.114.0", .public),
        ("223.255.255.255", .public), ("224.0.0.0", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.0", .reserved), ("255.255.255.254", .reserved), ("255.255.255.255", .broadcast),
        // IPv6.
        ("::", .unspecified), ("::1", .loopback), ("::2", .unspecified),
        ("::ffff:0.0.0.0", .unspecified), ("::ffff:127.0.0.1", .loopback), ("::ffff:10.0.0.1", .private),
        ("::ffff:169.254.169.254", .linkLocal), ("::ffff:8.8.8.8", .public), ("::ffff:255.255.255.255", .broadcast),
        ("::127.0.0.1", .loopback), ("::8.8.8.8", .public), ("::192.168.1.1", .private),
        ("64:ff9b::127.0.0.1", .loopback), ("64:ff9b::8.8.8.8", .public), ("64:ff9b::100.64.0.1", .sharedCGNAT),
        ("64:ff9b:1::8.8.8.8", .private),
        ("::ffff:0:8.8.8.8", .reserved), ("1::", .reserved), ("0:1::", .reserved),
        ("100::", .reserved), ("100::ffff:ffff:ffff:ffff", .reserved), ("100:0:0:1::", .reserved),
        ("2001::", .reserved), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", .reserved), ("2001:1ff:ffff::", .reserved),
        ("2001:200::", .public), ("2001:db8::", .documentation), ("2001:db8:ffff::1", .documentation), ("2001:db9::", .public),
        ("2002:7f00:1::", .loopback), ("2002:a00:1::1", .private), ("2002:808:808::1", .public), ("2002::", .unspecified),
        ("2a00:1450:4001:80b::200e", .public), ("2606:4700:4700::1111", .public), ("3ffe::", .public),
        ("3fff::", .documentation), ("3fff:fff:ffff::", .documentation), ("3fff:1000::", .public),
        ("4000::", .reserved), ("5f00::1", .reserved), ("c000::", .reserved), ("1000::", .reserved),
        ("fbff:ffff::", .reserved), ("fc00::", .uniqueLocal), ("fd12:3456::1", .uniqueLocal), ("fdff::", .uniqueLocal),
        ("fe7f::", .reserved), ("fe80::", .linkLocal), ("fe80::1", .linkLocal), ("febf:ffff::", .linkLocal),
        ("fec0::", .private), ("feff::", .private), ("ff00::", .multicast), ("ff02::1", .multicast), ("ffff::", .multicast),
    ]

    @Test(arguments: cases)
    func classifies(text: String, expected: AddressClass) throws {
        let address = try #require(IPAddress(text), "\(text) should parse")
        #expect(AddressPolicy.classify(address) == expected)
    }

    @Test func ipv4MappedIsNeverReturned() {
        for (text, _) in Self.cases {
            #expect(AddressPolicy.classify(IPAddress(text)!) != .ipv4Mapped)
        }
    }

    @Test(arguments: cases)
    func allowsOnlyPublicByDefault(text: String, expected: AddressClass) {
        let address = IPAddress(text)!
        #expect(AddressPolicy().allows(address) == (expected == .public))
    }

    @Test(arguments: cases)
    func allowsAllButUnspecifiedWithPrivateNetworks(text: String, expected: AddressClass) {
        let address = IPAddress(text)!
        #expect(AddressPolicy(allowPrivateNetworks: true).allows(address) == (expected != .unspecified))
    }

    @Test func everyIPv4FirstOctetIsClassifiedConsistently() {
        // Sweep: one address per /16 must classify without crashing, and only the listed ranges are non-public.
        var nonPublic = 0
        for a in 0...255 {
            for b in 0...255 {
                let address = IPAddress(bytes: [UInt8(a), UInt8(b), 1, 1])!
                if AddressPolicy.classify(address) != .public { nonPublic += 1 }
                let mapped = IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, UInt8(a), UInt8(b), 1, 1])!
                #expect(AddressPolicy.classify(mapped) == AddressPolicy.classify(address))
            }
        }
        // Whole /8s: 0, 10, 127 and 224-255 (35); then 100.64/10 (64 /16s), 169.254, 172.16/12 (16), 192.168,
        // 198.18/15 (2). The special /24s are not hit by x.y.1.1.
        #expect(nonPublic == 35 * 256 + 64 + 1 + 16 + 1 + 2)
    }
}
