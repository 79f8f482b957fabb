import Testing
@testable import FerryCore

@Suite struct PunycodeTests {
    // Vectors checked against Python's "punycode" codec and RFC 3492 section 7.1.
    @Test(arguments: [
        ("bücher", "bcher-kva"), ("münchen", "mnchen-3ya"), ("€", "lzg"), ("例え", "r8jz45g"), ("テスト", "zckzah"),
        ("abc", "abc-"), ("ü", "tda"),
        ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
        ("ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"),
    ])
    func encodes(label: String, expected: String) {
        #expect(Punycode.encode(label) == expected)
    }
}
