import Dispatch

/// The engine's run from start to stop: its one repeating timer (`startTicker`) and how far a shutdown got.
///
/// Owner: `DownloadEngine.queue`.
struct EngineLifecycle {
    var ticker: DispatchSourceTimer?
    var shuttingDown = false
    /// A graceful stop of a node of several holds every download while the part uploads store what it has
    /// (`storeHeldParts`): connections stay paused from then on.
    var holdingForStop = false
    /// Called once the last transfer is gone during shutdown.
    var shutdownDone: (@Sendable () -> Void)?
}
