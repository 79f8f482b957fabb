import Foundation

/// Follows Ferry's event stream without gaps: list first, then `GET /api/v1/events` with `Last-Event-ID` set to
/// the list's `Ferry-Event-Id`; on a dropped stream it reconnects after the last id it saw (waiting the
/// stream's `retry:`), and on a `reset` it lists again and starts over from the new id.
///
/// I/O around pure parts (`ServerSentEventParser`, `JobEvent`). Used from the command's one thread.
public final class EventFollower {
    private let api: FerryAPI
    private let jobs: [String]?
    /// Consecutive failed connections tolerated before giving up.
    private let maxFailures: Int
    private let sleep: (Double) -> Void

    /// - Parameters:
    ///   - jobs: only these jobs' events (`?jobs=`), or all.
    public init(api: FerryAPI, jobs: [String]? = nil, maxFailures: Int = 5,
                sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.api = api
        self.jobs = jobs
        self.maxFailures = maxFailures
        self.sleep = sleep
    }

    /// Runs until `onEvent` says `.stop`.
    /// - Parameters:
    ///   - resync: reads the current picture (list, fetch) and returns the `Ferry-Event-Id` it reflects; called
    ///     first and after every `reset`. Nil means "from now on".
    ///   - onEvent: each decoded event, in order (never `reset`, which `resync` handles).
    ///   - isDone: checked after each `resync` and before each reconnection: true ends the run (e.g. every job
    ///     waited for had already ended).
    ///   - onIdle: about once a second while the stream is open, for redrawing.
    public func run(resync: () throws -> Int64?, isDone: () -> Bool = { false },
                    onEvent: (JobEvent) throws -> StreamDecision, onIdle: (() -> Void)? = nil) throws {
        var after = try resync()
        var failures = 0
        while !isDone() {
            var parser = ServerSentEventParser()
            var decision = StreamDecision.continue
            var needsResync = false
            var received = false
            do throws(ClientError) {
                _ = try api.events(jobs: jobs, lastEventID: after, onChunk: { chunk in
                    received = true
                    for event in parser.feed(chunk) {
                        if event.event == "reset" {
                            needsResync = true
                            return .stop
                        }
                        decision = try onEvent(JobEvent(event))
                        if let id = event.id.flatMap({ Int64($0) }) { after = id }
                        if decision == .stop { return .stop }
                    }
                    return .continue
                }, onIdle: onIdle)
            } catch {
                guard case .transport = error else { throw error }
                failures += 1
                if failures >= maxFailures { throw error }
            }
            if decision == .stop { return }
            if received { failures = 0 }
            if needsResync {
                after = try resync()
                continue
            }
            sleep(Double(parser.retryMilliseconds ?? 2000) / 1000)
        }
        return
    }
}
