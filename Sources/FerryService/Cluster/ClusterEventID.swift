/// How event ids are numbered when several nodes share a PostgreSQL store. Pure.
///
/// `job` and `removed` events get their ids from the database (`ClusterJobStore.commit`), one sequence for the
/// cluster. `progress` events are never stored: each node numbers them itself. To keep every stream's ids strictly
/// increasing on every node, a stored id `n` is published as `n × block`, and the progress a node publishes after
/// it takes the ids `n × block + 1 …` up to the end of that block. When a node has used `refillAt` of its block, it
/// commits a `job` event of one job it runs (`JobSupervisor.checkpoint`), which opens a new block; progress that
/// would still find the block used up is dropped (the next `job` event carries the numbers). A `Last-Event-ID`
/// sent to any node therefore names a position in the stored log (`stored(fromPublished:)`): every node replays the
/// same `job`/`removed` events after it.
enum ClusterEventID {
    /// Published ids per stored event: 2^20, so that ids stay exact in a JavaScript number (2^53) for 2^33 stored
    /// events.
    static let block: Int64 = 1 << 20
    /// How much of a block a node uses before it asks for a new one.
    static let refillAt: Int64 = block / 2

    /// The id a stored event is published with.
    static func published(_ stored: Int64) -> Int64 { stored * block }

    /// The stored event a published id follows (itself for a `job`/`removed` event).
    static func stored(fromPublished id: Int64) -> Int64 { id / block }

    /// Whether a node whose last id is `last` should ask for a new block.
    static func needsRefill(after last: Int64) -> Bool { last % block >= refillAt }
}
