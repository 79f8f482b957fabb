/// How event ids are numbered when several nodes share a PostgreSQL store. Pure.
///
/// `job` and `removed` events get their ids from the database (`ClusterJobStore.commit`), one sequence for the
/// cluster. `progress` events are never stored: each node numbers them itself. To keep every stream's ids strictly
/// increasing on every node, a stored id `n` is published as `n × block`, and the progress a node publishes after
/// it takes the ids `n × block + 1 …` up to the end of that block (more progress before the next stored event is
/// dropped; the next `job` event carries the numbers anyway). A `Last-Event-ID` sent to any node therefore names a
/// position in the stored log (`stored(fromPublished:)`): every node replays the same `job`/`removed` events after it.
enum ClusterEventID {
    /// Published ids per stored event.
    static let block: Int64 = 1024

    /// The id a stored event is published with.
    static func published(_ stored: Int64) -> Int64 { stored * block }

    /// The stored event a published id follows (itself for a `job`/`removed` event).
    static func stored(fromPublished id: Int64) -> Int64 { id / block }
}
