@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

struct SpoolTests {
    private func withSpool(_ body: (Spool) throws -> Void) throws {
        let root = try Fixture.tempDirectory("ferry-spool-test")
        defer { Fixture.removeTree(root) }
        try body(try Spool(root: root + "/spool"))
    }

    @Test func createsTheLayoutAndTheCacheDirTag() throws {
        try withSpool { spool in
            let tag = try String(contentsOfFile: spool.root + "/CACHEDIR.TAG", encoding: .utf8)
            let lines = tag.split(separator: "\n")
            #expect(lines.first == "Signature: 8a477f597d28d172789f06886806bc55")
            #expect(lines.count == 2 && lines[1].hasPrefix("#"))
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: spool.root + "/partial", isDirectory: &isDirectory) && isDirectory.boolValue)
            #expect(FileManager.default.fileExists(atPath: spool.root + "/files", isDirectory: &isDirectory) && isDirectory.boolValue)
            #expect(spool.partialPath(for: "j1") == spool.root + "/partial/j1.part")
            #expect(spool.finishedPath(for: "a.bin") == spool.root + "/files/a.bin")
            #expect((spool.freeBytes() ?? 0) > 0)
        }
    }

    @Test func shareLinksAFinishedFileUnderAnotherNameAndTakesBackALinkLeftByACrash() throws {
        try withSpool { spool in
            try Data([7, 8, 9]).write(to: URL(fileURLWithPath: spool.finishedPath(for: "a.bin")))
            spool.claim(filename: "a.bin", for: "leader")
            // Asked for the leader's own name: the next free variant.
            let name = try spool.share(finished: "a.bin", as: "a.bin", for: "follower")
            #expect(name == "a (1).bin")
            var first = stat(), second = stat()
            #expect(stat(spool.finishedPath(for: "a.bin"), &first) == 0 && stat(spool.finishedPath(for: name), &second) == 0)
            #expect(first.st_ino == second.st_ino, "a hard link, not a second copy")
            // Again (a restart after the link, before the job was stored finished): the same name.
            #expect(try spool.share(finished: "a.bin", as: name, for: "follower") == name)
            // Removing one name leaves the other its bytes.
            spool.removeFinished(filename: "a.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: spool.finishedPath(for: name))) == Data([7, 8, 9]))
            do throws(SystemError) {
                _ = try spool.share(finished: "a.bin", as: "b.bin", for: "late")
                Issue.record("shared a file that is gone")
            } catch {
                #expect(error.code == ENOENT)
            }
        }
    }

    @Test func reopeningKeepsFilesAndRemovesTemporaries() throws {
        try withSpool { spool in
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: spool.partialPath(for: "keep")))
            try Data([1]).write(to: URL(fileURLWithPath: spool.root + "/partial/leftover.tmp"))
            let again = try Spool(root: spool.root)
            #expect(again.partialJobIDs() == ["keep"])
            #expect(!FileManager.default.fileExists(atPath: spool.root + "/partial/leftover.tmp"))
            #expect(again.usedBytes() > 0)
        }
    }

    @Test func reservationsAvoidEachOtherAndFinishedFiles() throws {
        try withSpool { spool in
            #expect(spool.reserve(filename: "a.txt", for: "1") == "a.txt")
            #expect(spool.reserve(filename: "a.txt", for: "1") == "a.txt")
            #expect(spool.reserve(filename: "a.txt", for: "2") == "a (1).txt")
            #expect(spool.reserve(filename: "a.txt", for: "3") == "a (2).txt")
            try Data().write(to: URL(fileURLWithPath: spool.finishedPath(for: "b")))
            #expect(spool.reserve(filename: "b", for: "4") == "b (1)")
            spool.release(jobID: "1")
            #expect(spool.reserve(filename: "a.txt", for: "5") == "a.txt")
            #expect(spool.reservedFilename(for: "2") == "a (1).txt")
        }
    }

    @Test func moveToFilesNeverOverwrites() throws {
        try withSpool { spool in
            try Data([1]).write(to: URL(fileURLWithPath: spool.partialPath(for: "j")))
            let name = spool.reserve(filename: "x.bin", for: "j")
            // Someone else put a file there after the reservation.
            try Data([9]).write(to: URL(fileURLWithPath: spool.finishedPath(for: "x.bin")))
            let final = try spool.moveToFiles(jobID: "j", filename: name, size: 1, sha256: String(repeating: "a", count: 64))
            #expect(final == "x (1).bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: spool.finishedPath(for: "x.bin"))) == Data([9]))
            #expect(try Data(contentsOf: URL(fileURLWithPath: spool.finishedPath(for: "x (1).bin"))) == Data([1]))
            // The finish record stays until the service has stored the job as finished.
            #expect(spool.finishRecord(jobID: "j") == FinishRecord(filename: "x (1).bin", size: 1, sha256: String(repeating: "a", count: 64)))
            #expect(spool.partialJobIDs() == ["j"])
            spool.removeFinishRecord(jobID: "j")
            #expect(spool.partialJobIDs().isEmpty)
            #expect(spool.reservedFilename(for: "j") == "x (1).bin")
            spool.removeFinished(filename: "x (1).bin")
            #expect(!FileManager.default.fileExists(atPath: spool.finishedPath(for: "x (1).bin")))
        }
    }

    @Test func aLinkLeftByACrashIsTakenAsOurs() throws {
        try withSpool { spool in
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: spool.partialPath(for: "j")))
            // A crash right after the link: files/x.bin is the very same file as the partial.
            #expect(link(spool.partialPath(for: "j"), spool.finishedPath(for: "x.bin")) == 0)
            let final = try spool.moveToFiles(jobID: "j", filename: "x.bin", size: 3, sha256: String(repeating: "b", count: 64))
            #expect(final == "x.bin", "no variant name, no orphan")
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/files") == ["x.bin"])
        }
    }

    @Test func aLinkLeftByACrashUnderAVariantIsTakenAsOurs() throws {
        try withSpool { spool in
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: spool.partialPath(for: "j")))
            try Data([9]).write(to: URL(fileURLWithPath: spool.finishedPath(for: "x.bin")))
            // The name was taken, so the crash left the link under the first variant.
            #expect(link(spool.partialPath(for: "j"), spool.finishedPath(for: "x (1).bin")) == 0)
            spool.claim(filename: "x.bin", for: "j")
            let final = try spool.moveToFiles(jobID: "j", filename: "x.bin", size: 3, sha256: String(repeating: "b", count: 64))
            #expect(final == "x (1).bin", "the leftover link, not a new variant")
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/files").sorted() == ["x (1).bin", "x.bin"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: spool.finishedPath(for: "x.bin"))) == Data([9]))
        }
    }

    @Test func aGroupOfFinishesSharesOneRecordFileThatGoesWithItsLastRecord() throws {
        try withSpool { spool in
            let sha = String(repeating: "d", count: 64)
            for id in ["a", "b", "c"] {
                try Data([1, 2]).write(to: URL(fileURLWithPath: spool.partialPath(for: id)))
            }
            let results = spool.moveToFiles(["a", "b", "c"].map {
                FinishingFile(jobID: $0, filename: $0 == "c" ? "c.bin" : "same.bin", size: 2, sha256: sha)
            })
            #expect(try results["a"]?.get() == "same.bin")
            #expect(try results["b"]?.get() == "same (1).bin")
            #expect(try results["c"]?.get() == "c.bin")
            #expect(["a", "b", "c"].allSatisfy { !FileManager.default.fileExists(atPath: spool.partialPath(for: $0)) })
            let files = try FileManager.default.contentsOfDirectory(atPath: spool.root + "/files").sorted()
            #expect(files == ["c.bin", "same (1).bin", "same.bin"])
            let partial = try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial")
            #expect(partial.count == 1 && partial[0].hasSuffix(".finishes"), "one record file for the group")
            // The records stay until the service has stored the jobs as finished, also across a restart.
            #expect(spool.finishRecord(jobID: "b") == FinishRecord(filename: "same (1).bin", size: 2, sha256: sha))
            #expect(spool.partialJobIDs() == ["a", "b", "c"])
            let reopened = try Spool(root: spool.root)
            #expect(reopened.partialJobIDs() == ["a", "b", "c"])
            #expect(reopened.finishRecord(jobID: "c") == FinishRecord(filename: "c.bin", size: 2, sha256: sha))
            reopened.removeFinishRecord(jobID: "a")
            reopened.removePartial(jobID: "b")
            #expect(reopened.partialJobIDs() == ["c"])
            #expect(reopened.finishRecord(jobID: "a") == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial").count == 1)
            reopened.removeFinishRecord(jobID: "c")
            #expect(reopened.partialJobIDs().isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial").isEmpty, "gone with its last record")
            // A job whose partial file is missing fails alone; no record is kept for it.
            try Data([3]).write(to: URL(fileURLWithPath: spool.partialPath(for: "d")))
            let mixed = reopened.moveToFiles([FinishingFile(jobID: "e", filename: "e.bin", size: 1, sha256: sha),
                                              FinishingFile(jobID: "d", filename: "d.bin", size: 1, sha256: sha)])
            #expect(throws: SystemError.self) { try mixed["e"]?.get() }
            #expect(try mixed["d"]?.get() == "d.bin")
            #expect(reopened.partialJobIDs() == ["d"])
            #expect(reopened.moveToFiles([]).isEmpty)
        }
    }

    @Test func groupsMovedOneAfterAnotherShareOneLogThatGoesWithItsLastRecord() throws {
        try withSpool { spool in
            let sha = String(repeating: "f", count: 64)
            for id in ["a", "b", "c"] {
                try Data([7]).write(to: URL(fileURLWithPath: spool.partialPath(for: id)))
                #expect(try spool.moveToFiles(jobID: id, filename: id + ".bin", size: 1, sha256: sha) == id + ".bin")
            }
            let logs = try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial")
            #expect(logs.count == 1 && logs[0].hasSuffix(".finishes"), "three groups, one log: \(logs)")
            spool.removeFinishRecord(jobID: "b")
            #expect(spool.partialJobIDs() == ["a", "c"])
            // A restart reads every group of the log; a record removed from the index is still in it (recovery drops
            // it for a job the store has finished, as it does for a record file whose unlink a crash undid).
            let reopened = try Spool(root: spool.root)
            #expect(reopened.partialJobIDs() == ["a", "b", "c"])
            #expect(reopened.finishRecord(jobID: "c") == FinishRecord(filename: "c.bin", size: 1, sha256: sha))
            // The log still takes groups while it has records, and goes with its last one.
            spool.removeFinishRecord(jobID: "a")
            try Data([8]).write(to: URL(fileURLWithPath: spool.partialPath(for: "d")))
            #expect(try spool.moveToFiles(jobID: "d", filename: "d.bin", size: 1, sha256: sha) == "d.bin")
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial") == logs)
            spool.removeFinishRecord(jobID: "c")
            spool.removeFinishRecord(jobID: "d")
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial").isEmpty)
            // The next group starts a new log.
            try Data([9]).write(to: URL(fileURLWithPath: spool.partialPath(for: "e")))
            #expect(try spool.moveToFiles(jobID: "e", filename: "e.bin", size: 1, sha256: sha) == "e.bin")
            #expect(spool.finishRecord(jobID: "e") != nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool.root + "/partial").count == 1)
        }
    }

    @Test func aLogKeepsItsWholeGroupsAndDropsATornEnd() {
        let sha = String(repeating: "e", count: 64)
        let first = FinishRecordGroup(records: [("j1", FinishRecord(filename: "a.bin", size: 1, sha256: sha))])
        let second = FinishRecordGroup(records: [("j2", FinishRecord(filename: "b", size: 2, sha256: sha)),
                                                 ("j3", FinishRecord(filename: "c", size: 3, sha256: sha))])
        let log = first.encoded + second.encoded
        #expect(FinishRecordGroup.decodeLog(log) == [first, second])
        #expect(FinishRecordGroup.decodeLog(first.encoded) == [first], "a file of one group is a log")
        #expect(FinishRecordGroup.decodeLog(String(log.dropLast())) == [first], "a line cut short drops its group")
        #expect(FinishRecordGroup.decodeLog(log + "ferry-finishes 1\njob j4\nname d\n") == [first, second])
        #expect(FinishRecordGroup.decodeLog(log + "\0\0\0") == [first, second], "zeros at the end")
        #expect(FinishRecordGroup.decodeLog("").isEmpty)
        #expect(FinishRecordGroup.decodeLog("garbage\n" + second.encoded) == [second])
    }

    @Test func digestsAreLowercaseHex() {
        #expect(Digest.lowercaseHex([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Digest.lowercaseHex([UInt8]()) == "")
    }

    @Test func aGroupFileRoundTrips() {
        let sha = String(repeating: "e", count: 64)
        let group = FinishRecordGroup(records: [("j1", FinishRecord(filename: "a b.bin", size: 7, sha256: sha)),
                                                ("j2", FinishRecord(filename: "c", size: 0, sha256: sha))])
        #expect(FinishRecordGroup.decode(group.encoded) == group)
        #expect(FinishRecordGroup.decode(String(group.encoded.dropLast())) == nil, "a cut file is refused")
        #expect(FinishRecordGroup.decode("ferry-finishes 1\njob ../x\nname a\nsize 1\nsha256 \(sha)\n") == nil)
        #expect(FinishRecordGroup.decode("ferry-finishes 2\n") == nil)
        #expect(FinishRecordGroup.decode("ferry-finishes 1\n")?.records.isEmpty == true)
    }

    @Test func finishRecordsThatAreNotOursAreRefused() {
        #expect(FinishRecord.decode("ferry-finish 1\nname a.bin\nsize 5\nsha256 \(String(repeating: "c", count: 64))\n")
                == FinishRecord(filename: "a.bin", size: 5, sha256: String(repeating: "c", count: 64)))
        #expect(FinishRecord.decode("ferry-finish 2\nname a.bin\nsize 5\nsha256 \(String(repeating: "c", count: 64))\n") == nil)
        #expect(FinishRecord.decode("ferry-finish 1\nname ../a\nsize 5\nsha256 \(String(repeating: "c", count: 64))\n") == nil)
        #expect(FinishRecord.decode("ferry-finish 1\nname a.bin\nsize x\nsha256 \(String(repeating: "c", count: 64))\n") == nil)
        #expect(FinishRecord.decode("garbage") == nil)
    }

    /// A node taking over a delivery checks the file of the job's name is the job's: the same size and SHA-256.
    @Test func aFinishedFileHoldsAJobsBytesOnlyWithTheirSizeAndDigest() async throws {
        try await EngineHarness.run { h in
            let bytes = Fixture.content(size: 10_000, seed: 7)
            try Fixture.writeFile(at: h.spool.finishedPath(for: "a.iso"), size: 10_000, seed: 7)
            let digest = Fixture.sha256Hex(of: bytes)
            func holds(_ name: String, size: Int64, sha256: String) async -> Bool {
                await withCheckedContinuation { continuation in
                    h.engine.holdsFinishedFile(named: name, size: size, sha256: sha256) { continuation.resume(returning: $0) }
                }
            }
            #expect(await holds("a.iso", size: 10_000, sha256: digest))
            #expect(await !holds("a.iso", size: 10_000, sha256: String(repeating: "0", count: 64)), "another job's bytes")
            #expect(await !holds("a.iso", size: 9_999, sha256: digest), "another size")
            #expect(await !holds("b.iso", size: 10_000, sha256: digest), "no such file")
        }
    }
}
