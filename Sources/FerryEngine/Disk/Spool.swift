import FerryCore
import Foundation

/// The spool directory: partial files, finished files and the names reserved for jobs.
///
/// Layout: `root/CACHEDIR.TAG`, `root/partial/<job id>.part`, `root/partial/<job id>.segments` (the state of a
/// segmented download, see `SegmentSidecar`), `root/files/<filename>`. Thread-safe: the
/// reservation table is guarded by one lock (`lock`); file-system calls need no lock. A finished file appears in
/// `files/` only whole (fsync, then link without overwriting, then fsync of the directory).
public final class Spool: @unchecked Sendable {
    public let root: String
    let partialDirectory: String
    let filesDirectory: String
    private let lock = NSLock()
    /// Filename reserved per job id; guarded by `lock`.
    private var reservations: [String: String] = [:]

    static let cacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by Ferry: backups may skip this directory.\n"

    /// Creates the layout when missing and removes leftover `partial/*.tmp` files.
    public init(root: String) throws {
        self.root = root
        self.partialDirectory = root + "/partial"
        self.filesDirectory = root + "/files"
        for directory in [root, partialDirectory, filesDirectory] {
            if mkdir(directory, 0o755) != 0, errno != EEXIST { throw SystemError("mkdir", directory) }
        }
        let tag = root + "/CACHEDIR.TAG"
        if access(tag, F_OK) != 0 {
            try Self.writeFile(tag, Self.cacheDirTag)
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? [] where name.hasSuffix(".tmp") {
            unlink(partialDirectory + "/" + name)
        }
    }

    /// `root/partial/<id>.part`.
    public func partialPath(for jobID: String) -> String { partialDirectory + "/" + jobID + ".part" }

    /// `root/partial/<id>.segments`: which ranges of a segmented download's (preallocated) partial file are written.
    public func segmentsPath(for jobID: String) -> String { partialDirectory + "/" + jobID + ".segments" }

    /// `root/files/<filename>`.
    public func finishedPath(for filename: String) -> String { filesDirectory + "/" + filename }

    /// Reserves `filename` (already sanitized) for a job, or the first free variant "name (1).ext", "name (2).ext"...
    /// A name is free when no other job reserved it and no file of that name is in `files/`. Reserving again for the
    /// same job returns its current name when that is the one asked for.
    public func reserve(filename: String, for jobID: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        if reservations[jobID] == filename { return filename }
        let taken = Set(reservations.filter { $0.key != jobID }.values)
        var number = 0
        var candidate = filename
        while taken.contains(candidate) || access(finishedPath(for: candidate), F_OK) == 0 {
            number += 1
            candidate = Filename.variant(filename, number: number)
        }
        reservations[jobID] = candidate
        return candidate
    }

    /// The name reserved for a job, if any.
    public func reservedFilename(for jobID: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return reservations[jobID]
    }

    /// Forgets a job's reservation (the job was removed).
    public func release(jobID: String) {
        lock.lock()
        defer { lock.unlock() }
        reservations[jobID] = nil
    }

    /// Records a name a job already holds (start-up recovery): no collision renaming, since the
    /// name was unique when it was given and a finished file of that name is the job's own.
    public func claim(filename: String, for jobID: String) {
        lock.lock()
        defer { lock.unlock() }
        reservations[jobID] = filename
    }

    /// Bytes of a job's download on disk (0 when absent): the partial file's size, or for a segmented download
    /// (whose file is preallocated to full size) the bytes its segment state records as written.
    public func partialSize(jobID: String) -> Int64 {
        var info = stat()
        guard stat(partialPath(for: jobID), &info) == 0 else { return 0 }
        if let sidecar = segmentState(jobID: jobID) {
            return sidecar.table.total == Int64(info.st_size) ? sidecar.table.bytesWritten : 0
        }
        return Int64(info.st_size)
    }

    /// How many bytes from offset 0 of a job's partial file are written without a gap: what a reader may stream
    /// while the download runs (a segmented download's file has unwritten gaps of zeros). 0 when absent.
    public func partialPrefix(jobID: String) -> Int64 {
        var info = stat()
        guard stat(partialPath(for: jobID), &info) == 0 else { return 0 }
        if let sidecar = segmentState(jobID: jobID) {
            return sidecar.table.total == Int64(info.st_size) ? sidecar.table.contiguousPrefix : 0
        }
        return Int64(info.st_size)
    }

    func segmentState(jobID: String) -> SegmentSidecar? {
        AtomicFile.read(segmentsPath(for: jobID)).flatMap(SegmentSidecar.decode)
    }

    /// Removes a job's partial file, then its segment state (in that order: a preallocated file without its
    /// segment state would look complete).
    public func removePartial(jobID: String) {
        unlink(partialPath(for: jobID))
        unlink(segmentsPath(for: jobID))
        unlink(finishRecordPath(for: jobID))
    }

    public func removeFinished(filename: String) { unlink(finishedPath(for: filename)) }

    /// Ids of the partial files (or leftover segment states) present.
    public func partialJobIDs() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? []
        let parts = names.filter { $0.hasSuffix(".part") }.map { String($0.dropLast(5)) }
        let segments = names.filter { $0.hasSuffix(".segments") }.map { String($0.dropLast(9)) }
        let finishes = names.filter { $0.hasSuffix(".done") }.map { String($0.dropLast(5)) }
        return Set(parts + segments + finishes).sorted()
    }

    /// Bytes available to an unprivileged user on the spool's file system.
    public func freeBytes() -> Int64? {
        var info = statvfs()
        guard statvfs(root, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Bytes held by partial and finished files.
    public func usedBytes() -> Int64 {
        var total: Int64 = 0
        for directory in [partialDirectory, filesDirectory] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                var info = stat()
                if stat(directory + "/" + name, &info) == 0 { total += Int64(info.st_blocks) * 512 }
            }
        }
        return total
    }

    /// Moves a job's (already fsynced) partial file into `files/` under its reserved name, never overwriting: on a
    /// clash the next free variant is taken and becomes the job's reservation. Returns the final filename.
    ///
    /// Crash safety: between the link and the unlink a `FinishRecord` (`partial/<job>.done`: the final
    /// name, size and SHA-256) is written, so a crash before the service has stored the job as finished
    /// does not orphan the file: start-up recovery adopts it (`finishRecord(jobID:)`). A name in `files/`
    /// that is already a link to this very partial (a crash right after the link) is taken as ours.
    public func moveToFiles(jobID: String, filename: String, size: Int64, sha256: String) throws(SystemError) -> String {
        let source = partialPath(for: jobID)
        let name: String
        if let linked = linkLeftByACrash(source, filename: filename) {
            claim(filename: linked, for: jobID)
            name = linked
        } else {
            var candidate = reserve(filename: filename, for: jobID)
            var number = 0
            while link(source, finishedPath(for: candidate)) != 0 {
                guard errno == EEXIST else { throw SystemError("link", finishedPath(for: candidate)) }
                number += 1
                candidate = reserve(filename: Filename.variant(filename, number: number), for: jobID)
            }
            name = candidate
        }
        try Self.syncDirectory(filesDirectory)
        try AtomicFile.write(finishRecordPath(for: jobID), FinishRecord(filename: name, size: size, sha256: sha256).encoded)
        guard unlink(source) == 0 else { throw SystemError("unlink", source) }
        try Self.syncDirectory(partialDirectory)
        return name
    }

    func finishRecordPath(for jobID: String) -> String { partialDirectory + "/" + jobID + ".done" }

    /// The record of a finish whose job may not have been stored as finished yet.
    public func finishRecord(jobID: String) -> FinishRecord? {
        AtomicFile.read(finishRecordPath(for: jobID)).flatMap(FinishRecord.decode)
    }

    /// Called once the job is durably finished (or gone).
    public func removeFinishRecord(jobID: String) { unlink(finishRecordPath(for: jobID)) }

    /// The name (`filename` or one of its variants) under which `source` is already linked in `files/`.
    private func linkLeftByACrash(_ source: String, filename: String) -> String? {
        var candidate = filename
        var number = 0
        while access(finishedPath(for: candidate), F_OK) == 0 {
            if Self.sameFile(source, finishedPath(for: candidate)) { return candidate }
            number += 1
            candidate = Filename.variant(filename, number: number)
        }
        return nil
    }

    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError("fsync", path) }
    }

    private static func writeFile(_ path: String, _ text: String) throws(SystemError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", temporary) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0 else { throw SystemError("write", temporary) }
        guard rename(temporary, path) == 0 else { throw SystemError("rename", path) }
    }
}
