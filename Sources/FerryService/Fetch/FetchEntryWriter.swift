import FerryStore
import Foundation

/// Writes `FetchCache`'s changes to the store (schema 10), in the order they were made, off the caller's path: an
/// entry lost to a crash only costs a revalidation.
///
/// Owner: its one consumer task reads the stream in order; `save` and `delete` may be called from any thread.
final class FetchEntryWriter: Sendable {
    private enum Change: Sendable {
        case save(FetchEntryRecord)
        case delete(String)
    }

    private let continuation: AsyncStream<Change>.Continuation
    private let consumer: Task<Void, Never>

    init(store: any JobStore) {
        let (stream, continuation) = AsyncStream<Change>.makeStream()
        self.continuation = continuation
        consumer = Task {
            for await change in stream {
                switch change {
                case .save(let entry): try? await store.saveFetchEntry(entry)
                case .delete(let id): try? await store.deleteFetchEntry(jobID: id)
                }
            }
        }
    }

    deinit { continuation.finish() }

    func save(_ entry: FetchEntryRecord) { continuation.yield(.save(entry)) }
    func delete(jobID: String) { continuation.yield(.delete(jobID)) }

    /// Returns once every change asked so far was written (tests, shutdown); no change may be asked afterwards.
    func finish() async {
        continuation.finish()
        await consumer.value
    }
}
