import FerryCore
import FerryHTTP
import FerryStore
import Foundation

extension JobsController {
    /// `DELETE /api/v1/jobs?state=finished,failed&olderThan=7d`: removes ended jobs and their files,
    /// oldest first. `olderThan` is required (a duration, or an RFC 3339 time), so a bare DELETE on the
    /// collection never empties it; `state` defaults to every ended state and may name only those.
    func purge(_ request: HTTPRequest) async throws -> HTTPResponse {
        let selection = try Self.purgeSelection(state: request.queryValue("state"),
                                                olderThan: request.queryValue("olderThan"), now: Date())
        let removed = try await supervisor.purge(selection, visibleTo: JobAccess.current)
        var json = JSONWriter(capacity: 32 * removed.count + 32)
        json.beginObject()
        json.field("removed", removed.count)
        json.key("ids")
        json.beginArray()
        for id in removed { json.string(id) }
        json.endArray()
        json.endObject()
        return .json(.ok, json.bytes)
    }

    static func purgeSelection(state: String?, olderThan: String?, now: Date) throws -> PurgeSelection {
        guard let olderThan, !olderThan.isEmpty else {
            throw APIError(.invalidRequest, "'olderThan' is required: a duration such as 7d, or an RFC 3339 time")
        }
        let cutoff: Date
        if let seconds = DurationText.parse(olderThan) {
            cutoff = now.addingTimeInterval(-seconds)
        } else if let time = Timestamp.parse(olderThan) {
            cutoff = time
        } else {
            throw APIError(.invalidRequest, "'olderThan' must be a duration such as 7d, or an RFC 3339 time")
        }
        var states = PurgeSelection.endedStates
        if let state, !state.isEmpty {
            states = []
            for name in state.split(separator: ",") {
                guard let value = JobState(rawValue: name.trimmingCharacters(in: .whitespaces)),
                      PurgeSelection.endedStates.contains(value) else {
                    throw APIError(.invalidRequest, "'state' must be a comma list of: finished, failed, cancelled")
                }
                states.insert(value)
            }
        }
        return PurgeSelection(states: states, cutoff: cutoff)
    }
}
