@testable import FerryEngine
import Foundation
import Testing

@Suite("RequestBodyReader")
struct RequestBodyReaderTests {
    /// Reads the whole body in pieces of at most `piece` bytes; the last piece is the failure, if any.
    static func drain(_ body: ObjectStoreRequest.Body, piece: Int) -> (bytes: [UInt8], failure: String?) {
        var reader = RequestBodyReader(body)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: piece)
        for _ in 0..<1000 {
            let result = buffer.withUnsafeMutableBytes { reader.read(into: $0) }
            switch result {
            case .filled(0): return (out, nil)
            case .filled(let count): out += buffer[..<count]
            case .failed(let reason): return (out, reason)
            }
        }
        return (out, "never ended")
    }

    @Test func aDocumentIsSentInPiecesInOrder() {
        let bytes = Array("<CompleteMultipartUpload/>".utf8)
        #expect(Self.drain(.bytes(bytes), piece: 5).bytes == bytes)
        #expect(Self.drain(.bytes(bytes), piece: 1 << 16).bytes == bytes)
        #expect(Self.drain(.none, piece: 8).bytes.isEmpty)
    }

    @Test func aFileRangeIsReadAsItIsSent() throws {
        let path = NSTemporaryDirectory() + "body-reader-\(UUID().uuidString)"
        let content = (0..<1000).map { UInt8($0 % 251) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(content)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let range = Self.drain(.file(descriptor: descriptor, offset: 100, length: 300), piece: 64)
        #expect(range.failure == nil)
        #expect(range.bytes == Array(content[100..<400]))
        // A file shorter than the range promised stops the exchange, saying so.
        let short = Self.drain(.file(descriptor: descriptor, offset: 900, length: 300), piece: 64)
        #expect(short.bytes == Array(content[900..<1000]))
        #expect(short.failure == "the file ended before 300 bytes from offset 900")
    }
}
