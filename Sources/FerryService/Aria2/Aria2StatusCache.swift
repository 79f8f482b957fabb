import Synchronization

/// aria2 status objects already written (`Aria2Status.write`), by gid, each with the version of the job's listing it was
/// written from (`JobListing.version`) and the fields it was asked with: AriaNg's poll lists a thousand jobs a second,
/// most of which did not change, and those are copied rather than written again. Only jobs not downloading are kept
/// (a downloading job's speed changes without its record changing); anything else a status object shows is the
/// record's or fixed. One object per job, for the fields last asked (clients poll with one set of keys).
///
/// Owner: none; a Mutex, any thread (aria2's reading calls run on connection threads). The objects dropped when they
/// outnumber `bound(jobs:)` (jobs removed leave theirs behind until then). Otherwise pure.
final class Aria2StatusCache: Sendable {
    /// A written status object and what it was written from.
    struct Fragment: Sendable, Equatable {
        let version: UInt64
        let fields: Aria2StatusFields
        let bytes: [UInt8]
    }

    /// What a call may reuse: the objects written with its fields, as they were when it started (a copy).
    struct Reusable: Sendable {
        let fields: Aria2StatusFields
        let fragments: [UInt64: Fragment]

        /// The status object written from the record `listing` was taken from, if there is one for these fields.
        func bytes(for listing: JobListing) -> [UInt8]? {
            guard listing.state != .downloading, let fragment = fragments[listing.gid], fragment.version == listing.version,
                  fragment.fields == fields else { return nil }
            return fragment.bytes
        }
    }

    private let fragments = Mutex<[UInt64: Fragment]>([:])

    init() {}

    /// The objects a call asking `fields` may reuse (a copy, made without copying the objects).
    func reusable(for fields: Aria2StatusFields) -> Reusable {
        Reusable(fields: fields, fragments: fragments.withLock { $0 })
    }

    /// Keeps the objects a call wrote (those of jobs not downloading: `Aria2Status.write` leaves the others out); when
    /// the cache then holds more than `bound(jobs:)` for the `jobs` the table has, it keeps only these.
    func keep(_ written: [(gid: UInt64, fragment: Fragment)], jobs: Int) {
        guard !written.isEmpty else { return }
        fragments.withLock { fragments in
            for (gid, fragment) in written { fragments[gid] = fragment }
            guard fragments.count > Self.bound(jobs: jobs) else { return }
            fragments = Dictionary(written.map { ($0.gid, $0.fragment) }, uniquingKeysWith: { _, last in last })
        }
    }

    /// How many objects are kept at most for a table of `jobs` jobs: twice as many, and some.
    static func bound(jobs: Int) -> Int { 2 * jobs + 64 }

    /// How many objects are kept (tests).
    var count: Int { fragments.withLock { $0.count } }
}
