import FerryCore
import Foundation
import Testing

@Suite("Checksum and digest algorithm names")
struct ChecksumTests {
    @Test func algorithmsAndTheirLengths() {
        #expect(DigestAlgorithm.allCases.map(\.rawValue) == ["sha-256", "sha-512", "sha-1", "md5"])
        #expect(DigestAlgorithm.allCases.map(\.hexLength) == [64, 128, 40, 32])
        #expect(DigestAlgorithm(name: "SHA-512") == .sha512)
        #expect(DigestAlgorithm(name: "sha512") == nil)
        #expect(DigestAlgorithm(name: "sha-384") == nil)
        #expect(DigestAlgorithm.md5.displayName == "MD5")
    }

    @Test func valuesAreLowercasedAndChecked() throws {
        let checksum = try Checksum(algorithm: .sha1, value: String(repeating: "A0", count: 20))
        #expect(checksum.value == String(repeating: "a0", count: 20))
        #expect(throws: ChecksumProblem.wrongLength(.sha1, found: 64)) {
            try Checksum(algorithm: .sha1, value: String(repeating: "0", count: 64))
        }
        #expect(throws: ChecksumProblem.notHexadecimal(.md5)) { try Checksum(algorithm: .md5, value: String(repeating: "x", count: 32)) }
        #expect(throws: ChecksumProblem.notHexadecimal(.md5)) { try Checksum(algorithm: .md5, value: "") }
        #expect(throws: ChecksumProblem.notHexadecimal(.md5)) { try Checksum(algorithm: .md5, value: String(repeating: "0", count: 31) + "é") }
        #expect(throws: ChecksumProblem.unknownAlgorithm("crc32")) { try Checksum(algorithmName: "crc32", value: "00000000") }
    }

    @Test func textFormRoundTrips() throws {
        for algorithm in DigestAlgorithm.allCases {
            let checksum = try Checksum(algorithm: algorithm, value: String(repeating: "9f", count: algorithm.hexLength / 2))
            #expect(checksum.description == "\(algorithm.rawValue):\(checksum.value)")
            #expect(try Checksum(parsing: checksum.description) == checksum)
            let coded = try JSONDecoder().decode([Checksum].self, from: JSONEncoder().encode([checksum]))
            #expect(coded == [checksum])
        }
        #expect(try Checksum(parsing: "MD5:" + String(repeating: "F", count: 32)).value == String(repeating: "f", count: 32))
        #expect(throws: ChecksumProblem.notAlgorithmAndValue) { try Checksum(parsing: String(repeating: "0", count: 64)) }
        #expect(throws: ChecksumProblem.unknownAlgorithm("")) { try Checksum(parsing: ":00") }
        #expect(throws: (any Error).self) { try JSONDecoder().decode([Checksum].self, from: Data(#"["sha-1:00"]"#.utf8)) }
    }

    @Test func messagesNameTheProblem() {
        #expect(ChecksumProblem.wrongLength(.sha512, found: 64).description.contains("128"))
        #expect(ChecksumProblem.unknownAlgorithm("sha-3").description.contains("sha-256, sha-512, sha-1, md5"))
        // A long or odd name is shortened and stripped of control characters in the message.
        let odd = ChecksumProblem.unknownAlgorithm(String(repeating: "x", count: 100) + "\u{1}").description
        #expect(odd.count < 140 && !odd.contains("\u{1}"))
    }
}
