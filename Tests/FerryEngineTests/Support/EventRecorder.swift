import FerryCore
import FerryEngine
import Foundation

/// Collects an engine's events for a test. Thread-safe: `lock` guards `events`.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [TransferEvent] = []
    /// When each progress event arrived (monotonic seconds) and the bytes it reported, by job.
    private var progressTimes: [String: [(time: Double, bytes: Int64)]] = [:]

    func record(_ event: TransferEvent) {
        lock.lock()
        events.append(event)
        if case .progress(let id, let progress) = event {
            progressTimes[id, default: []].append((Double(DispatchTime.now().uptimeNanoseconds) / 1e9, progress.bytesReceived))
        }
        lock.unlock()
    }

    /// The job's progress as (arrival time, bytes received) pairs.
    func progressSamples(for id: String) -> [(time: Double, bytes: Int64)] {
        lock.lock()
        defer { lock.unlock() }
        return progressTimes[id] ?? []
    }

    var all: [TransferEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    func events(for id: String) -> [TransferEvent] { all.filter { $0.id == id } }

    /// Polls until `condition` holds or `timeout` seconds passed; returns whether it held.
    @discardableResult
    func wait(timeout: Double = 20, until condition: ([TransferEvent]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(all) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition(all)
    }

    /// Waits for the job's `.finished` or `.failed` event and returns it. A `.finished` that came before its
    /// SHA-256 (a job with nothing to verify) is returned with the digest of the `.digested` event that follows.
    func end(of id: String, timeout: Double = 30) async -> TransferEvent? {
        await wait(timeout: timeout) { events in events.contains { $0.id == id && $0.isEnd } }
        guard let end = events(for: id).last(where: { $0.isEnd }) else { return nil }
        guard var file = end.finishedFile, file.sha256 == nil else { return end }
        await wait(timeout: timeout) { events in events.contains { $0.id == id && $0.digestedSHA256 != nil } }
        file.sha256 = events(for: id).lazy.compactMap(\.digestedSHA256).first
        return .finished(id: id, file)
    }
}

extension EventRecorder {
    /// Every `.finished` file so far, one that came without its SHA-256 given the digest of the `.digested` event
    /// that follows it (waited for up to `timeout` seconds).
    func finishedFiles(timeout: Double = 30) async -> [FinishedFile] {
        await wait(timeout: timeout) { events in
            let pending = Set(events.filter { $0.finishedFile.map { $0.sha256 == nil } ?? false }.map(\.id))
            return pending.isSubset(of: Set(events.filter { $0.digestedSHA256 != nil }.map(\.id)))
        }
        let events = all
        var digests: [String: String] = [:]
        for event in events { if let sha256 = event.digestedSHA256 { digests[event.id] = sha256 } }
        return events.compactMap { event in
            guard var file = event.finishedFile else { return nil }
            if file.sha256 == nil { file.sha256 = digests[event.id] }
            return file
        }
    }
}

extension TransferEvent {
    var isEnd: Bool {
        switch self {
        case .finished, .failed: return true
        default: return false
        }
    }

    var finishedFile: FinishedFile? {
        if case .finished(_, let file) = self { return file }
        return nil
    }

    var digestedSHA256: String? {
        if case .digested(_, let sha256) = self { return sha256 }
        return nil
    }

    var failure: JobFailure? {
        if case .failed(_, let failure) = self { return failure }
        return nil
    }

    var metadata: TransferMetadata? {
        if case .responded(_, let metadata) = self { return metadata }
        return nil
    }

    var isStarted: Bool {
        if case .started = self { return true }
        return false
    }

    var isRestarted: Bool {
        if case .restarted = self { return true }
        return false
    }

    var progress: TransferProgress? {
        if case .progress(_, let progress) = self { return progress }
        return nil
    }
}
