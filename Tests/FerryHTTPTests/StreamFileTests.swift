import Dispatch
import Foundation
import Testing
@testable import FerryHTTP
import FerryTestSupport

struct StreamFileTests {
    /// Regions and bytes come out of a stream in the order they went in; a region beyond a declared length is cut to
    /// it (the rest counted as gone, so a producer waiting to drain is not held), and one left with nothing is dropped.
    @Test func regionsKeepTheirPlaceAndAreCutToTheDeclaredLength() throws {
        let directory = try Fixture.tempDirectory("ferry-stream-file")
        defer { Fixture.removeTree(directory) }
        let path = directory + "/f"
        try Data(Fixture.content(size: 1000, seed: 3)).write(to: URL(fileURLWithPath: path))
        let file = StreamFile(descriptor: open(path, O_RDONLY | O_CLOEXEC))
        let queue = DispatchQueue(label: "test.stream")
        let stream = ResponseStream(queue: queue)
        stream.write([1, 2])
        stream.writeFile(file, offset: 100, length: 500)
        stream.write([3])
        stream.writeFile(file, offset: 0, length: 10)
        queue.sync {
            #expect(stream.bufferedByteCount == 513)
            #expect(stream.takeFileRegion(within: nil) == nil, "bytes come first")
            #expect(stream.takePending(limit: .max) == [[1, 2]], "bytes stop at a region")
            stream.didSend(2)
            let region = stream.takeFileRegion(within: 300)
            #expect(region?.offset == 100 && region?.length == 300)
            #expect(stream.bufferedByteCount == 311, "the 200 bytes cut off no longer count")
            #expect(stream.takePending(limit: .max) == [[3]])
            #expect(stream.takeFileRegion(within: 0) == nil, "cut to nothing: dropped")
            #expect(stream.bufferedByteCount == 301, "nor do its 10")
            #expect(!stream.hasPending)
        }
    }

    @Test func aRegionIsSentInPiecesAndMovesPastWhatWent() throws {
        let directory = try Fixture.tempDirectory("ferry-stream-file")
        defer { Fixture.removeTree(directory) }
        let content = Fixture.content(size: 3 << 20, seed: 4)
        try Data(content).write(to: URL(fileURLWithPath: directory + "/f"))
        var region = StreamFileRegion(file: StreamFile(descriptor: open(directory + "/f", O_RDONLY | O_CLOEXEC)),
                                      offset: 5, length: (3 << 20) - 5)
        let sink = open(directory + "/out", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(sink) }
        var sends = 0
        while region.length > 0 {
            #expect(region.send(to: sink) > 0)
            sends += 1
        }
        #expect(sends == 3, "at most 1 MiB a call")
        #expect(region.offset == 3 << 20)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/out")) == Data(content[5...]))
    }
}
