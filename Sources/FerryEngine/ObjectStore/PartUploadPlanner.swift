/// What a running download's part uploads do next (pure): the file's written ranges and the upload's stored parts
/// in, part actions out. It holds no state; `DownloadEngine.pumpParts` asks it on the engine queue and carries the
/// step out (creating the upload, uploading the parts, pausing or waking the connections).
///
/// Nothing starts while a `CreateMultipartUpload` is in flight or during the back-off after a failed request
/// (`retryDelay`). Without an upload, one is created once a first part is ready; a file of one part is stored at its
/// finish instead. With one, and the validators and size it was started under, the parts to upload next are those a
/// restore read back (`awaiting`, uploaded first), then any the written ranges cover, at most `inFlightLimit` in
/// flight. The download is held (`backlogged`) while parts still wait for a slot, or while the bytes it received
/// beyond the stored parts reach `PartLookahead.limit` (one part per connection), and the uploads run without
/// failing (issue 33: a fast origin ran far ahead of the store, and a node killed then lost everything past the
/// stored parts); only while one is in flight, whose end asks again, so a held download is always woken.
enum PartUploadPlanner {
    /// Part uploads one transfer may have in flight.
    static let inFlightLimit = 2

    /// The upload as the engine knows it (`LiveParts`).
    struct State: Equatable {
        var record: ObjectUploadRecord?
        /// A `CreateMultipartUpload` is in flight.
        var creating = false
        /// The monotonic time before which no request is tried again (after a failure).
        var notBefore: Double = 0
        var inFlight: Set<Int> = []
        /// Parts a restore read back that the upload does not hold yet.
        var awaiting: Set<Int> = []
        /// Failed requests in a row.
        var failures = 0
    }

    enum Step: Equatable {
        /// Nothing to start now; the download is not held.
        case wait
        /// Start the multipart upload, with parts of `partSize` bytes.
        case create(partSize: Int64)
        /// Upload `parts` (lowest first); `backlogged`: hold the download's connections until one is stored.
        case upload(parts: [Int], backlogged: Bool)
    }

    /// - Parameters:
    ///   - size: the file's length; `etag` and `lastModified`: the validators of the accepted answer.
    ///   - preferredPartSize: the configured part size (`PartPlan.partSize(for:preferred:)` may raise it).
    ///   - written: the file's written ranges (`SegmentTable.writtenRanges`).
    ///   - pending: bytes received and not yet written.
    ///   - connections: the download's connections, for its lookahead (`PartLookahead`); nil: no lookahead limit.
    static func next(size: Int64, preferredPartSize: Int64, etag: String?, lastModified: String?,
                     written: [Range<Int64>], pending: Int64 = 0, connections: Int? = nil, state: State, now: Double) -> Step {
        guard size > 0, !state.creating, now >= state.notBefore else { return .wait }
        guard let record = state.record else {
            let partSize = PartPlan.partSize(for: size, preferred: preferredPartSize)
            guard size > partSize,
                  !PartProgress.ready(size: size, partSize: partSize, written: written, done: [], limit: 1).isEmpty else { return .wait }
            return .create(partSize: partSize)
        }
        guard record.size == size, record.etag == etag, record.lastModified == lastModified else { return .wait }
        var done = Set(record.parts.map(\.number)).union(state.inFlight)
        let ready = PartProgress.next(size: size, partSize: record.partSize, written: written, done: done,
                                      first: state.awaiting, limit: inFlightLimit - state.inFlight.count)
        done.formUnion(ready)
        let waiting = !PartProgress.ready(size: size, partSize: record.partSize, written: written, done: done, limit: 1).isEmpty
        // Parts a restore read back count as stored: until they are stored again the ledger keeps the record naming them.
        let ahead = connections.map { connections in
            PartLookahead.unstored(size: size, partSize: record.partSize, written: written,
                                   stored: Set(record.parts.map(\.number)).union(state.awaiting), pending: pending)
                >= PartLookahead.limit(connections: connections, partSize: record.partSize)
        } ?? false
        let backlogged = (waiting || ahead) && state.failures == 0 && !(state.inFlight.isEmpty && ready.isEmpty)
        return ready.isEmpty && !backlogged ? .wait : .upload(parts: ready, backlogged: backlogged)
    }

    /// The back-off after `failures` failed requests in a row (at least 1): 0.5 s doubling, at most 30 s.
    static func retryDelay(failures: Int) -> Double {
        min(30, 0.5 * Double(1 << (min(max(failures, 1), 8) - 1)))
    }
}
