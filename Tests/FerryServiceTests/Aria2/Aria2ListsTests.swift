import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// aria2's lists as `Aria2Jobs` gathers them (orders, counts, speed) and status objects as `Aria2Status` writes them
/// (aria2's key order, the fields `keys` asks for).
@Suite("aria2 lists and written status objects")
struct Aria2ListsTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    func job(_ sequence: Int64, _ state: JobState, priority: Int = 0, ended: TimeInterval? = nil) -> JobRecord {
        var job = JobRecord(id: "j\(sequence)", sequence: sequence, url: "https://o.example/\(sequence)", state: state,
                            priority: priority, dedupeKey: "k\(sequence)", createdAt: Self.epoch)
        job.updatedAt = Self.epoch.addingTimeInterval(ended ?? 0)
        job.finishedAt = ended.map { Self.epoch.addingTimeInterval($0) }
        return job
    }

    func listing(_ job: JobRecord, version: UInt64 = 1) -> JobListing {
        JobListing(job, gid: JobGID.value(JobGID.of(job.id)), owner: 0, version: version)
    }

    func gathered(_ jobs: [JobRecord], rates: [Int64: Double] = [:], keeping lists: Aria2Jobs.Lists = .all,
                  reusing reusable: Aria2StatusCache.Reusable? = nil, versions: [Int64: UInt64] = [:]) -> Aria2Jobs {
        var gathered = Aria2Jobs(keeping: lists, reusing: reusable)
        for job in jobs {
            gathered.add(listing(job, version: versions[job.sequence] ?? 1), shown: { job },
                         rates: { rates[job.sequence].map { LiveRates(speed: $0, eta: nil) } })
        }
        gathered.sortLists()
        return gathered
    }

    @Test func listsAreInAria2sOrderWhateverOrderTheTableHasThem() {
        let jobs = [job(5, .waiting), job(2, .downloading), job(3, .paused, priority: 2), job(1, .delivering),
                    job(4, .waiting, priority: 2), job(6, .finished, ended: 30), job(7, .failed, ended: 10),
                    job(8, .cancelled, ended: 30), job(9, .finished, ended: 20)]
        for shuffled in [jobs, jobs.reversed(), jobs.shuffled()] {
            let lists = gathered(shuffled)
            #expect(lists.active.sorted.map(\.listing.sequence) == [1, 2])
            #expect(lists.waiting.sorted.map(\.listing.sequence) == [3, 4, 5], "priority first, then older first")
            #expect(lists.stopped.sorted.map(\.listing.sequence) == [7, 9, 6, 8], "in the order they ended, then older first")
            #expect(lists.active.sorted.allSatisfy { $0.gid == JobGID.of($0.job?.id ?? "") })
        }
    }

    @Test func countsAndSpeedCoverListsNotKept() {
        let jobs = [job(1, .downloading), job(2, .delivering), job(3, .waiting), job(4, .finished, ended: 1)]
        let counted = gathered(jobs, rates: [1: 1000.4, 2: 500, 3: 7], keeping: [])
        #expect(counted.active.count + counted.waiting.count + counted.stopped.count == 0)
        #expect(counted.counts.active == 2 && counted.counts.waiting == 1 && counted.counts.stopped == 1)
        #expect(counted.speed == 1000.4, "only downloading jobs' speeds count")
        let waiting = gathered(jobs, keeping: .waiting)
        #expect(waiting.waiting.count == 1 && waiting.active.count == 0 && waiting.counts.active == 2)
    }

    @Test func keysNameFieldsAndNothingElse() {
        #expect(Aria2StatusFields(keys: nil) == .all && Aria2StatusFields(keys: []) == .all)
        #expect(Aria2StatusFields(keys: ["gid", "nokey", "seeder", "status"]) == [.gid, .status])
        #expect(Aria2StatusFields(keys: ["nokey"]) == [])
        #expect(Aria2StatusFields.names.map(\.name) == Aria2StatusFields.names.map(\.name).sorted())
        #expect(Aria2StatusFields.names.reduce(into: Aria2StatusFields()) { $0.insert($1.field) } == .all)
    }

    @Test func statusObjectsAreWrittenWithTheirKeysInAria2sOrder() throws {
        let status = Aria2Status(directory: "/d \"q\"")
        var failed = job(1, .failed, ended: 1)
        failed.error = JobFailure(code: .httpError, message: "the origin answered 404", httpStatus: 404)
        var downloading = job(2, .downloading)
        downloading.bytesExpected = 3_000_000
        downloading.bytesReceived = 1_000
        downloading.filename = "f.bin"
        let keySets: [[String]?] = [nil, ["gid", "status", "errorCode", "nokey"], ["files", "dir"], ["errorMessage"]]
        for record in [failed, downloading, job(3, .paused), job(4, .delivering)] {
            for keys in keySets {
                let written = status.render(record, rates: LiveRates(speed: 12.5, eta: nil), keys: keys).bytes
                let value = try #require(RPCValue.parse(written))
                // `RPCValue` writes an object's keys sorted, as aria2: the same bytes show the same order.
                #expect(value.bytes == written, "\(record.state) \(String(describing: keys))")
                let names = Set(value.object?.keys.map { $0 } ?? [])
                if let keys { #expect(names.isSubset(of: Set(keys))) } else { #expect(names.count >= 12) }
            }
        }
        let paused = status.render(job(3, .paused), rates: nil, keys: ["status", "gid", "completedLength", "uploadSpeed"])
        #expect(String(decoding: paused.bytes, as: UTF8.self)
            == #"{"completedLength":"0","gid":"\#(JobGID.of("j3"))","status":"paused","uploadSpeed":"0"}"#)
        let waiting = gathered([job(3, .paused), job(5, .waiting)]).waiting.sorted
        let list = status.write(waiting, at: [0, 1], fields: [.gid]).list
        #expect(String(decoding: list.bytes, as: UTF8.self)
            == #"[{"gid":"\#(JobGID.of("j3"))"},{"gid":"\#(JobGID.of("j5"))"}]"#)
    }
}
