import Testing
@testable import FerryHTTP

@Suite struct SharedChunkTests {
    private func wire(_ chunk: SharedChunk, chunked: Bool) -> [UInt8] { Array(chunk.wire(chunked: chunked)) }

    @Test func aChunkIsFramedOnceForChunkedBodiesAndBareOtherwise() {
        let chunk = SharedChunk(Array(repeating: UInt8(ascii: "a"), count: 26))
        #expect(wire(chunk, chunked: true) == Array("1a\r\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 26) + [13, 10])
        #expect(wire(chunk, chunked: false) == Array(repeating: UInt8(ascii: "a"), count: 26))
        #expect(chunk.wireCount(chunked: true) == 32)
        #expect(chunk.wireCount(chunked: false) == 26)
        #expect(chunk.payload == Array(repeating: UInt8(ascii: "a"), count: 26))
    }

    @Test func theRemainderOfAPartialWriteIsTheUnsentWireBytesInOrder() {
        let chunks = [SharedChunk(Array("id: 1\n\n".utf8)), SharedChunk(Array("id: 2\n\n".utf8))]
        let all = chunks.flatMap { wire($0, chunked: true) }
        for written in 0...all.count {
            #expect(SharedChunk.remainder(of: chunks, chunked: true, after: written) == Array(all[written...]))
        }
        let bare = chunks.flatMap { wire($0, chunked: false) }
        #expect(SharedChunk.remainder(of: chunks, chunked: false, after: 9) == Array(bare[9...]))
    }
}
