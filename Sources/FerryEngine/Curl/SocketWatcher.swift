import CCurl
import Dispatch
import Foundation

/// Watches one socket for libcurl with a read and/or a write Dispatch source.
///
/// Owned by the engine queue (`CurlMulti.queue`). The watched descriptor is closed only in the last cancel
/// handler, never while a source may still watch it: for sockets Ferry opened (`CURLOPT_OPENSOCKETFUNCTION`) the
/// watcher closes the socket itself once libcurl asked for it to be closed; for descriptors libcurl owns (the
/// threaded resolver's socket pair) the watcher watches its own `dup()` and closes that.
final class SocketWatcher: @unchecked Sendable {
    /// The socket as libcurl knows it.
    let socket: Int32
    /// The descriptor the sources watch: `socket` itself when Ferry owns it, else a duplicate.
    private let watched: Int32
    private let ownsSocket: Bool
    private let queue: DispatchQueue
    private let group: DispatchGroup
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var liveSources = 0
    private var closeRequested = false
    private var closed = false

    /// - Parameters:
    ///   - socket: the descriptor libcurl asked to watch.
    ///   - ownedByFerry: true when Ferry opened it and libcurl will ask Ferry to close it.
    ///   - group: entered per live source, left in each cancel handler (shutdown waits on it).
    init(socket: Int32, ownedByFerry: Bool, queue: DispatchQueue, group: DispatchGroup) {
        self.socket = socket
        self.ownsSocket = ownedByFerry
        self.watched = ownedByFerry ? socket : dup(socket)
        self.queue = queue
        self.group = group
    }

    /// Watches for the requested directions, calling `onEvent` with `CURL_CSELECT_IN` or `_OUT` on the queue.
    func watch(read wantRead: Bool, write wantWrite: Bool, onEvent: @escaping (Int32) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closeRequested, watched >= 0 else { return }
        if wantRead, readSource == nil {
            let source = DispatchSource.makeReadSource(fileDescriptor: watched, queue: queue)
            source.setEventHandler { onEvent(ferry_cselect_in()) }
            arm(source)
            readSource = source
        } else if !wantRead, let source = readSource {
            readSource = nil
            source.cancel()
        }
        if wantWrite, writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: watched, queue: queue)
            source.setEventHandler { onEvent(ferry_cselect_out()) }
            arm(source)
            writeSource = source
        } else if !wantWrite, let source = writeSource {
            writeSource = nil
            source.cancel()
        }
    }

    /// Stops watching (libcurl's `CURL_POLL_REMOVE`); the socket stays open.
    func stopWatching() {
        dispatchPrecondition(condition: .onQueue(queue))
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        if !ownsSocket { closeWhenIdle() }
    }

    /// Stops watching and closes the descriptor once no source can touch it any more.
    func closeWhenIdle() {
        dispatchPrecondition(condition: .onQueue(queue))
        closeRequested = true
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        closeIfIdle()
    }

    private func arm(_ source: DispatchSourceProtocol) {
        liveSources += 1
        group.enter()
        source.setCancelHandler { [self] in
            liveSources -= 1
            closeIfIdle()
            group.leave()
        }
        source.resume()
    }

    private func closeIfIdle() {
        guard closeRequested, liveSources == 0, !closed, watched >= 0 else { return }
        closed = true
        Foundation.close(watched)
    }
}
