/// `watch`: every job, kept current from the event stream until the process is interrupted. Lists all pages
/// at start and after a `reset`. Used from the command's one thread.
public final class JobWatcher {
    private let api: FerryAPI
    private let display: BoardDisplay

    public init(api: FerryAPI, display: BoardDisplay) {
        self.api = api
        self.display = display
    }

    /// Runs until interrupted (a signal ends the process) or until the server is gone for good (throws).
    public func run() throws {
        var board = JobBoard()
        let (api, display) = (self.api, self.display)
        // A watch outlives a restart of Ferry: about a minute of failed reconnections before it gives up.
        let follower = EventFollower(api: api, maxFailures: 30)
        try follower.run(resync: {
            let page = try api.allJobs()
            board.load(page.jobs)
            display.update(board, change: .state(""))
            return page.eventID
        }, onEvent: { event in
            // Apply first: `board` as an argument would be evaluated (copied) before `apply` ran.
            let change = board.apply(event)
            display.update(board, change: change)
            return .continue
        }, onIdle: { display.tick(board) })
    }
}
