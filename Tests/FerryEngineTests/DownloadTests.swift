import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// End-to-end downloads from a real nginx on 127.0.0.1. Serialized with the other integration suites' tests
/// because one of them counts descriptors.
@Suite(.serialized) struct EngineIntegrationTests {}

extension EngineIntegrationTests {
    @Test func downloadsASmallFile() async throws {
        let origin = try NginxOrigin.start()
        defer { origin.stop() }
        try Fixture.writeFile(at: origin.root + "/small.bin", size: 100_000, seed: 1)
        try await EngineHarness.run { h in
            let end = await h.download(TransferSpec(id: "s1", url: origin.url("/small.bin")))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.filename == "small.bin")
            #expect(file.size == 100_000)
            #expect(file.sha256 == Fixture.sha256Hex(of: Fixture.content(size: 100_000, seed: 1)))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            #expect(h.finishedNames() == ["small.bin"])
            #expect(h.partialSize("s1") == nil)
            let events = h.recorder.events(for: "s1")
            #expect(events.first?.isStarted == true)
            let metadata = try #require(events.compactMap(\.metadata).first)
            #expect(metadata.bytesExpected == 100_000)
            #expect(metadata.etag?.hasPrefix("\"") == true)
            #expect(metadata.lastModified != nil)
        }
    }
}
