/// `add --wait`: follows the given jobs' events until each has ended (finished, failed, cancelled or deleted),
/// showing them on a `BoardDisplay`, and returns the final board.
///
/// Start-up without gaps: one list call for its `Ferry-Event-Id`, then each job fetched, then the event stream
/// from that id (so a job that finished between the submit and the stream is seen finished). A large batch is
/// read from the listing instead of job by job, and its events are not filtered by the server (the ids would
/// make too long a URL): the board ignores other jobs' events. Used from the command's one thread.
public final class JobWaiter {
    /// Up to this many jobs are fetched one by one and named in the stream's `?jobs=`.
    static let fewJobs = 20

    private let api: FerryAPI
    private let ids: [String]
    private let display: BoardDisplay

    public init(api: FerryAPI, ids: [String], display: BoardDisplay) {
        self.api = api
        self.ids = ids
        self.display = display
    }

    public func run() throws -> JobBoard {
        var board = JobBoard(tracking: ids)
        guard !ids.isEmpty else { return board }
        let (api, ids, display) = (self.api, self.ids, self.display)
        let few = ids.count <= Self.fewJobs
        let follower = EventFollower(api: api, jobs: few ? ids : nil, maxFailures: 10)
        try follower.run(resync: {
            var eventID: Int64?
            var jobs: [Job] = []
            if few {
                eventID = try api.jobs(limit: 1).eventID
                for id in ids {
                    do {
                        jobs.append(try api.job(id).value)
                    } catch let error as ClientError {
                        guard case .api(404, _, _) = error else { throw error }
                        _ = board.apply(.removed(id: id))
                    }
                }
            } else {
                let page = try api.allJobs()
                eventID = page.eventID
                let listed = Dictionary(page.jobs.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
                for id in ids {
                    if let job = listed[id] { jobs.append(job) } else { _ = board.apply(.removed(id: id)) }
                }
            }
            board.load(jobs)
            display.update(board, change: .state(""))
            return eventID
        }, isDone: { board.allEnded }, onEvent: { event in
            let change = board.apply(event)
            display.update(board, change: change)
            return board.allEnded ? .stop : .continue
        }, onIdle: { display.tick(board) })
        display.finish(board)
        return board
    }
}
