import FerryHTTP

/// What one fan-out shard owes its streams when several sends piled up while it was busy, merged into one
/// round: each stream once, with all its chunks in the order they were sent (so one `sendmsg` carries them all),
/// then its finish if one was asked. A pure value (targets are only compared by identity), used on the shard's
/// queue by ``EventFanout``.
struct FanoutRound<Target: AnyObject> {
    struct Delivery {
        let target: Target
        var chunks: [SharedChunk]
        /// Runs after the chunks are written (the stream ends); later chunks for the target are dropped.
        var finish: (@Sendable () -> Void)?
    }

    /// In the order each target first appeared.
    private(set) var deliveries: [Delivery] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    init() {}

    /// Adds `chunks` for every target in `targets`, after what each was given before.
    mutating func add(_ chunks: [SharedChunk], to targets: some Sequence<Target>) {
        for target in targets {
            let index = position(of: target)
            guard deliveries[index].finish == nil else { continue }
            deliveries[index].chunks += chunks
        }
    }

    /// Ends `target` after everything added for it so far.
    mutating func finish(_ target: Target, with action: @escaping @Sendable () -> Void) {
        let index = position(of: target)
        guard deliveries[index].finish == nil else { return }
        deliveries[index].finish = action
    }

    private mutating func position(of target: Target) -> Int {
        let id = ObjectIdentifier(target)
        if let index = positions[id] { return index }
        deliveries.append(Delivery(target: target, chunks: [], finish: nil))
        positions[id] = deliveries.count - 1
        return deliveries.count - 1
    }
}
