import Testing
@testable import FerryService

@Suite("DedupeIndex")
struct DedupeIndexTests {
    @Test func keepsEveryIDOfAKeyAndDropsEmptyKeys() {
        var index = DedupeIndex()
        #expect(index.ids(forKey: "k").isEmpty)
        index.insert("a", key: "k")
        index.insert("a", key: "k")
        #expect(index.ids(forKey: "k") == ["a"])
        index.insert("b", key: "k")
        index.insert("c", key: "k")
        index.insert("z", key: "other")
        #expect(Set(index.ids(forKey: "k")) == ["a", "b", "c"])
        #expect(index.count == 2)
        index.remove("b", key: "k")
        index.remove("missing", key: "k")
        index.remove("a", key: "nope")
        #expect(Set(index.ids(forKey: "k")) == ["a", "c"])
        index.remove("a", key: "k")
        #expect(index.ids(forKey: "k") == ["c"])
        index.remove("c", key: "k")
        #expect(index.ids(forKey: "k").isEmpty)
        #expect(index.count == 1)
        index.remove("y", key: "other")
        #expect(index.ids(forKey: "other") == ["z"])
        index.remove("z", key: "other")
        #expect(index.count == 0)
    }

    @Test func manyIDsUnderOneKey() {
        var index = DedupeIndex()
        for n in 0..<1_000 { index.insert("job\(n)", key: "https://origin.example/same.bin") }
        #expect(index.ids(forKey: "https://origin.example/same.bin").count == 1_000)
        for n in 0..<999 { index.remove("job\(n)", key: "https://origin.example/same.bin") }
        #expect(index.ids(forKey: "https://origin.example/same.bin") == ["job999"])
    }

    @Test func sharedKeyHandsBackTheIndexedInstance() {
        var index = DedupeIndex()
        let key = "https://origin.example/a/rather/long/path/to/share.bin"
        index.insert("a", key: key)
        let other = String(key.utf8.map { Character(UnicodeScalar($0)) })
        let shared = index.sharedKey(other)
        #expect(shared == key)
        #expect(shared.utf8.withContiguousStorageIfAvailable { $0.baseAddress }
            == key.utf8.withContiguousStorageIfAvailable { $0.baseAddress })
        #expect(index.sharedKey("unknown") == "unknown")
    }
}
