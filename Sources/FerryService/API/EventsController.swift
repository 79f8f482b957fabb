import FerryHTTP
import FerryStore

/// `GET /api/v1/events` and `GET /api/v1/jobs/{id}/events`: Server-Sent Events.
///
/// Where a stream starts: `Last-Event-ID` (what `EventSource` sends when it reconnects) wins over
/// the `lastEventId` query parameter (how a page hands over a list's `Ferry-Event-Id` on its first
/// connection, since `EventSource` cannot set headers); with neither, events from now on. The writers
/// get no heartbeat timer of their own: the hub pings every stream from one timer.
struct EventsController: Sendable {
    let supervisor: JobSupervisor
    let hub: EventHub
    /// With several nodes: the feed of the cluster's stored events, read up to a client's `Last-Event-ID` before its
    /// replay (the id may come from a node ahead of this one).
    var clusterFeed: ClusterEventFeed? = nil

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/api/v1/events", all)
        routes.add(.GET, "/api/v1/jobs/:id/events", one)
    }

    func all(_ request: HTTPRequest) async throws -> HTTPResponse {
        let interval = try Self.interval(request)
        let jobs: Set<String>? = if case .jobs(let ids) = EventFilter(jobsQuery: request.queryValue("jobs")) { ids } else { nil }
        let lastID = try Self.lastEventID(request)
        if let lastID { await clusterFeed?.catchUp(toInclude: lastID) }
        let start: EventHub.Start = lastID.map { .after($0) } ?? .live
        let hub = hub
        let access = JobAccess.current
        return EventStreamWriter.response(heartbeat: 0) { writer in
            hub.subscribe(writer: writer, stream: writer.stream, jobs: jobs, intervalMilliseconds: interval, start: start,
                          access: access)
        }
    }

    func one(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let interval = try Self.interval(request)
        let access = JobAccess.current
        guard let snapshot = await supervisor.snapshot(id), access.sees(snapshot.job) else { throw APIError.jobNotFound(id) }
        let lastID = try Self.lastEventID(request)
        let ended = snapshot.job.state.isTerminal
        if ended, lastID != nil {
            // EventSource stops reconnecting on 204.
            return HTTPResponse(status: .noContent)
        }
        let start: EventHub.Start
        if let lastID {
            await clusterFeed?.catchUp(toInclude: lastID)
            start = .after(lastID)
        } else {
            start = .snapshot(ServerEvent(id: snapshot.eventID, kind: .job, jobID: id,
                                          data: JobView.render(snapshot.job, rates: snapshot.rates, node: supervisor.peekNode(id),
                                                               key: supervisor.keyName(of: snapshot.job)),
                                          closesJobStream: ended, owner: snapshot.job.ownerKey))
        }
        let hub = hub
        return EventStreamWriter.response(heartbeat: 0) { writer in
            hub.subscribe(writer: writer, stream: writer.stream, jobs: [id], intervalMilliseconds: interval,
                          start: start, endsWithJob: id, access: access)
        }
    }

    static func interval(_ request: HTTPRequest) throws(APIError) -> Int {
        guard let text = request.queryValue("interval") else { return 500 }
        guard let value = Int(text), value >= 0 else {
            throw APIError(.invalidRequest, "'interval' must be a whole number of milliseconds")
        }
        return max(100, value)
    }

    static func lastEventID(_ request: HTTPRequest) throws(APIError) -> Int64? {
        guard let text = request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId") else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        // An id this server never issued is answered with a `reset` event, not an error.
        return Int64(trimmed) ?? -1
    }
}
