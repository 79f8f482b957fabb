import FerryStore
import FerryTestSupport
import Foundation
import Testing
@testable import FerryService

@Suite("Store ballast")
struct StoreBallastTests {
    @Test func isLaidDownReallyAllocatedAndReleasedOnce() throws {
        let root = try Fixture.tempDirectory("ferry-ballast")
        defer { Fixture.removeTree(root) }
        let ballast = StoreBallast(spoolRoot: root, size: 1 << 20)
        #expect(!ballast.isPresent)
        #expect(ballast.ensure())
        #expect(ballast.isPresent)
        var info = stat()
        #expect(stat(ballast.path, &info) == 0 && Int64(info.st_blocks) * 512 >= 1 << 20, "allocated, not sparse")
        #expect(ballast.ensure(), "idempotent")
        #expect(ballast.release())
        #expect(!ballast.isPresent)
        #expect(!ballast.release(), "nothing left to free")
    }

    @Test func defaultSizeIsOnePercentWithinBounds() {
        #expect(StoreBallast.defaultSize(fileSystemBytes: 24 << 20) == 256 << 10)
        #expect(StoreBallast.defaultSize(fileSystemBytes: 500 << 20) == 5 << 20)
        #expect(StoreBallast.defaultSize(fileSystemBytes: 1 << 40) == 8 << 20)
        #expect(StoreBallast.defaultSize(fileSystemBytes: nil) == 1 << 20)
    }

    @Test func outOfSpaceErrorsAreRecognized() {
        #expect(JobStoreError.sqlite(code: 13, message: "database or disk is full", operation: "w").isOutOfSpace)
        #expect(JobStoreError.sqlite(code: 4874, message: "disk I/O error", operation: "journal_mode").isOutOfSpace)
        #expect(!JobStoreError.sqlite(code: 19, message: "constraint", operation: "insert").isOutOfSpace)
        #expect(!JobStoreError.duplicateID("a").isOutOfSpace)
    }
}
