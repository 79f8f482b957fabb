import FerryCore
import Foundation

/// The spool directory: partial files, finished files and the names reserved for jobs.
///
/// Layout: `root/CACHEDIR.TAG`, `root/partial/<job id>.part`, `root/partial/<job id>.segments` (the state of a
/// segmented download, see `SegmentSidecar`), `root/partial/<uuid>.finishes` (finish records of a group of jobs
/// moved into `files/`, appended to a `FinishLog`, see `moveToFiles(_:)`), `root/files/<filename>`. Thread-safe: the
/// reserved names guard themselves (`FilenameReservations`); the index of finish records is guarded by `lock`; the
/// log being appended to by `logLock` (taken before `lock`, never after); creating partial files and unlinking moved
/// ones take turns on `partialEntries` (taken alone); other file-system calls need no lock. A finished file appears
/// in `files/` only whole (fsync, then link without overwriting, then fsync of the directory).
public final class Spool: @unchecked Sendable {
    public let root: String
    /// How far each partial file being written is written (`FileWriter` publishes, `FollowStream` watches).
    public let growing = GrowingFiles()
    let partialDirectory: String
    let filesDirectory: String
    /// The names reserved for jobs (thread-safe on its own).
    private let reservations = FilenameReservations()
    private let lock = NSLock()
    /// Finish records kept in group files (`moveToFiles(_:)`): the group file of each job, and each group file's
    /// records not yet removed; guarded by `lock`.
    private var groupOfJob: [String: String] = [:]
    private var groupRecords: [String: [String: FinishRecord]] = [:]
    /// The log finish records are appended to; guarded by `logLock`. Removed with its last record, like any record file.
    private var log: FinishLog?
    private let logLock = NSLock()
    /// Creating a partial file (`FileWriter`) and unlinking one moved into `files/` take turns here. The kernel
    /// serializes them on `partial/`'s lock anyway, but there a waiter spins on the CPU while the holder works, and
    /// on ext4 without a journal a creation steps over every recently freed inode one by one: with 16 downloads
    /// starting at once, a batch of small files spent up to a tenth of its CPU spinning. Here a waiter sleeps.
    let partialEntries = NSLock()
    /// The lanes this spool's writers run on (`DiskLanes`): each Ferry's own, never shared with another in the process.
    let lanes = DiskLanes.Pair(label: "ferry")
    /// The lanes the follow streams of this spool's files target (`FollowStream`, `DiskLanes`).
    public let followLanes = DiskLanes(label: "ferry.follow-lane", count: DiskLanes.defaultCount)
    /// `partial/` held single-job records (`<job>.done`) of earlier versions at start-up: only then are they looked for.
    private let hasSingleRecords: Bool
    /// A log holding more than this many bytes takes no more groups (it goes once its records are gone).
    static let logLimit: Int64 = 4 << 20

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
            try AtomicFile.write(tag, Self.cacheDirTag)
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? []
        for name in names where name.hasSuffix(".tmp") {
            unlink(partialDirectory + "/" + name)
        }
        hasSingleRecords = names.contains { $0.hasSuffix(".done") }
        loadRecordGroups(names: names)
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
        reservations.reserve(filename, for: jobID, inFiles: isInFiles)
    }

    /// `reserve`, checked even when the job holds the name (another job may too, claimed at start-up; a file of that
    /// name may be in `files/`, or it was given on another node): the name of an object key (`DownloadEngine.accept`).
    /// A link of the job's own partial file left there by a crash keeps the name.
    public func reserveUnshared(filename: String, for jobID: String) -> String {
        reservations.reserveUnshared(filename, for: jobID, inFiles: isInFiles) { name in
            Self.sameFile(partialPath(for: jobID), finishedPath(for: name))
        }
    }

    /// Whether a file named `filename` is in `files/`.
    private func isInFiles(_ filename: String) -> Bool { access(finishedPath(for: filename), F_OK) == 0 }

    /// The name reserved for a job, if any.
    public func reservedFilename(for jobID: String) -> String? { reservations.name(of: jobID) }

    /// Forgets a job's reservation (the job was removed).
    public func release(jobID: String) { reservations.assign(nil, to: jobID) }

    /// Records a name a job already holds (start-up recovery): no collision renaming, since the
    /// name was unique when it was given and a finished file of that name is the job's own.
    public func claim(filename: String, for jobID: String) { reservations.assign(filename, to: jobID) }

    /// Bytes of a job's download on disk (0 when absent): the partial file's size, or for a segmented download
    /// (whose file is preallocated to full size) the bytes its segment state records as written.
    public func partialSize(jobID: String) -> Int64 {
        measurePartial(jobID: jobID, split: \.bytesWritten)
    }

    /// How many bytes from offset 0 of a job's partial file are written without a gap: what a reader may stream
    /// while the download runs (a segmented download's file has unwritten gaps of zeros). 0 when absent.
    public func partialPrefix(jobID: String) -> Int64 {
        measurePartial(jobID: jobID, split: \.contiguousPrefix)
    }

    /// The partial file's size; for a split download (preallocated), `split` of its segment table. 0 when absent
    /// or when the segment state does not match the file.
    private func measurePartial(jobID: String, split: (SegmentTable) -> Int64) -> Int64 {
        var info = stat()
        guard stat(partialPath(for: jobID), &info) == 0 else { return 0 }
        if let sidecar = segmentState(jobID: jobID) {
            return sidecar.table.total == Int64(info.st_size) ? split(sidecar.table) : 0
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
        AtomicFile.remove(segmentsPath(for: jobID))
        removeFinishRecord(jobID: jobID)
    }

    public func removeFinished(filename: String) { unlink(finishedPath(for: filename)) }

    /// Ids of the partial files (or leftover segment states) present.
    public func partialJobIDs() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? []
        let parts = names.filter { $0.hasSuffix(".part") }.map { String($0.dropLast(5)) }
        let segments = names.filter { $0.hasSuffix(".segments") }.map { String($0.dropLast(9)) }
        let finishes = names.filter { $0.hasSuffix(".done") }.map { String($0.dropLast(5)) }
        let grouped = lock.withLock { Array(groupOfJob.keys) }
        return Set(parts + segments + finishes + grouped).sorted()
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
    /// A group of one: see `moveToFiles(_:)`.
    public func moveToFiles(jobID: String, filename: String, size: Int64, sha256: String) throws(SystemError) -> String {
        let results = moveToFiles([FinishingFile(jobID: jobID, filename: filename, size: size, sha256: sha256)])
        guard let result = results[jobID] else { throw SystemError("link", partialPath(for: jobID), errno: EINVAL) }
        return try result.get()
    }

    /// Moves a group of finished downloads into `files/` with one fsync of `files/` for the whole group (group
    /// commit): links each partial file there under its reserved name (never overwriting: on a clash the next free
    /// variant is taken and becomes the job's reservation), fsyncs `files/`, appends the group's finish records
    /// (`FinishRecordGroup`: final name, size and SHA-256 per job) to the `FinishLog` and syncs it (one
    /// `fdatasync`; a new log, made when there is none, syncs `partial/` once), and only then unlinks the partial
    /// files. A job whose result is a success is durably in `files/` and may be reported finished. Returns each
    /// job's final filename or failure.
    ///
    /// Crash safety: the partial file is unlinked only once its link and its finish record are durable, so a
    /// crash before the service has stored the job as finished does not orphan the file: start-up recovery
    /// adopts it (`finishRecord(jobID:)`). A crash before that leaves the partial file (the download resumes; a
    /// name in `files/` that is already a link to this very partial is taken as ours). The unlinks are not
    /// synced: a partial file that comes back after a crash sits next to its durable record (recovery adopts
    /// the file) or belongs to a job stored as finished (recovery removes it).
    func moveToFiles(_ finishes: [FinishingFile]) -> [String: Result<String, SystemError>] {
        var results: [String: Result<String, SystemError>] = [:]
        var linked: [(finish: FinishingFile, name: String)] = []
        for finish in finishes {
            do throws(SystemError) {
                linked.append((finish, try linkIntoFiles(jobID: finish.jobID, filename: finish.filename)))
            } catch {
                results[finish.jobID] = .failure(error)
            }
        }
        guard !linked.isEmpty else { return results }
        let group = FinishRecordGroup(records: linked.map {
            ($0.finish.jobID, FinishRecord(filename: $0.name, size: $0.finish.size, sha256: $0.finish.sha256))
        })
        do throws(SystemError) {
            try Self.syncDirectory(filesDirectory)
            try append(group)
        } catch {
            // The partial files stay: these jobs fail and keep their bytes.
            for (finish, _) in linked { results[finish.jobID] = .failure(error) }
            return results
        }
        partialEntries.withLock {
            for (finish, name) in linked {
                let source = partialPath(for: finish.jobID)
                results[finish.jobID] = unlink(source) == 0 ? .success(name) : .failure(SystemError("unlink", source))
            }
        }
        return results
    }

    /// Appends a group to the log (made first when there is none) and adds its records to the index, both under
    /// `logLock`, so that the log is not removed as emptied between the two. A log that failed or grew past
    /// `logLimit` takes no more groups.
    private func append(_ group: FinishRecordGroup) throws(SystemError) {
        logLock.lock()
        defer { logLock.unlock() }
        let current: FinishLog
        if let log { current = log } else { current = try FinishLog(directory: partialDirectory) }
        log = current
        do throws(SystemError) {
            try current.append(group)
        } catch {
            log = nil
            if lock.withLock({ groupRecords[current.path] == nil }) { unlink(current.path) }
            throw error
        }
        register(group, at: current.path)
        if current.size > Self.logLimit { log = nil }
    }

    /// Links a job's partial file into `files/` (not yet synced) and returns the name it got.
    private func linkIntoFiles(jobID: String, filename: String) throws(SystemError) -> String {
        let source = partialPath(for: jobID)
        // Usually the job holds `filename` and nothing is there: the link alone settles it (no lookup first). When
        // the name is taken, it may be this file's own link left by a crash: the full search below.
        if reserve(filename: filename, for: jobID) == filename {
            if link(source, finishedPath(for: filename)) == 0 { return filename }
            guard errno == EEXIST else { throw SystemError("link", finishedPath(for: filename)) }
        }
        if let linked = linkLeftByACrash(source, filename: filename) {
            claim(filename: linked, for: jobID)
            return linked
        }
        var candidate = reserve(filename: filename, for: jobID)
        var number = 0
        while link(source, finishedPath(for: candidate)) != 0 {
            guard errno == EEXIST else { throw SystemError("link", finishedPath(for: candidate)) }
            number += 1
            candidate = reserve(filename: Filename.variant(filename, number: number), for: jobID)
        }
        return candidate
    }

    /// Gives a job its own finished file with the bytes of finished file `source`: see `FileSharing`.
    public func share(finished source: String, as filename: String, for jobID: String) throws(SystemError) -> String {
        try FileSharing.share(finished: source, as: filename, for: jobID, in: self)
    }

    /// A single job's finish record as versions before group records wrote it (still read and removed).
    func finishRecordPath(for jobID: String) -> String { partialDirectory + "/" + jobID + ".done" }

    /// The record of a finish whose job may not have been stored as finished yet.
    public func finishRecord(jobID: String) -> FinishRecord? {
        if let record = lock.withLock({ groupOfJob[jobID].flatMap { groupRecords[$0]?[jobID] } }) { return record }
        return AtomicFile.read(finishRecordPath(for: jobID)).flatMap(FinishRecord.decode)
    }

    /// Called once the job is durably finished (or gone). A record file (a log) is removed with its last record.
    public func removeFinishRecord(jobID: String) {
        if hasSingleRecords { AtomicFile.remove(finishRecordPath(for: jobID)) }
        logLock.withLock {
            if let emptied = lock.withLock({ forgetRecord(jobID: jobID) }) { removeRecordFile(emptied) }
        }
    }

    /// Deletes a record file none of whose records is needed any more; the log stops taking groups. Under `logLock`.
    private func removeRecordFile(_ path: String) {
        if log?.path == path { log = nil }
        unlink(path)
    }

    /// Adds a group's records to the index (a job recorded in an older group leaves it). Takes `lock`; under
    /// `logLock` (or at start-up).
    private func register(_ group: FinishRecordGroup, at path: String) {
        let emptied = lock.withLock { () -> [String] in
            var emptied: [String] = []
            for (jobID, record) in group.records {
                if let old = forgetRecord(jobID: jobID) { emptied.append(old) }
                groupOfJob[jobID] = path
                groupRecords[path, default: [:]][jobID] = record
            }
            return emptied.filter { groupRecords[$0] == nil }
        }
        emptied.forEach { removeRecordFile($0) }
    }

    /// Removes a job from the index; returns its group's path when that group has no record left. Under `lock`.
    private func forgetRecord(jobID: String) -> String? {
        guard let path = groupOfJob.removeValue(forKey: jobID) else { return nil }
        groupRecords[path]?[jobID] = nil
        guard groupRecords[path]?.isEmpty ?? true else { return nil }
        groupRecords[path] = nil
        return path
    }

    /// Reads the record files (logs) left in `partial/` (at start-up); one without a whole record is removed.
    private func loadRecordGroups(names: [String]) {
        for name in names where name.hasSuffix(".finishes") {
            let path = partialDirectory + "/" + name
            let groups = AtomicFile.read(path).map(FinishRecordGroup.decodeLog) ?? []
            guard groups.contains(where: { !$0.records.isEmpty }) else {
                unlink(path)
                continue
            }
            groups.forEach { register($0, at: path) }
        }
    }

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

    static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError("fsync", path) }
    }
}

/// The local spool keeps finished files in `files/`.
extension Spool: FileStorage {
    public func store(_ finishes: [FinishingFile]) -> [String: Result<String, SystemError>] { moveToFiles(finishes) }

    public func sizeOfFinished(filename: String) -> Int64? {
        var info = stat()
        return stat(finishedPath(for: filename), &info) == 0 ? Int64(info.st_size) : nil
    }

    public func location(ofFinished filename: String) -> String { finishedPath(for: filename) }
}
