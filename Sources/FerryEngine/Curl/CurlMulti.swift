import CCurl
import Dispatch
import Foundation

/// The libcurl multi handle, driven by `curl_multi_socket_action` from Dispatch sources.
///
/// Owned by one serial queue (`queue`): every libcurl call of the engine happens there, checked with
/// `dispatchPrecondition`. libcurl tells us which sockets to watch (socket callback, one `SocketWatcher` per
/// socket, found again with `curl_multi_assign`) and when to call back (timer callback, ONE `DispatchSourceTimer`).
/// Sockets are opened and closed by Ferry (`CURLOPT_OPENSOCKETFUNCTION`/`CLOSESOCKETFUNCTION`, see `CurlEasy`) so
/// a descriptor is closed only after its sources' cancel handlers ran. Finished transfers are removed from the
/// multi after `curl_multi_socket_action` returned, never inside a callback.
final class CurlMulti: @unchecked Sendable {
    let queue: DispatchQueue
    private var multi: UnsafeMutableRawPointer?
    private let timer: DispatchSourceTimer
    private let sourceGroup = DispatchGroup()
    /// Watchers by socket; the watcher is also stored in libcurl with `curl_multi_assign`.
    private var watchers: [Int32: SocketWatcher] = [:]
    /// Sockets Ferry opened for libcurl and that libcurl has not asked to close yet.
    private var ownedSockets: Set<Int32> = []
    /// Completion handlers of the easy handles in the multi.
    private var completions: [UnsafeMutableRawPointer: (CURLcode) -> Void] = [:]
    /// True while a libcurl multi call runs (callbacks may be inside it): removing a handle then is forbidden.
    private(set) var insideCurl = false
    private var closed = false
    /// Runs after every libcurl call that may have delivered body bytes (socket actions, unpausing), before
    /// finished transfers are completed: the engine queues the chunks its write callbacks staged.
    var afterDelivery: (() -> Void)?

    /// Easy handles currently in the multi.
    var transferCount: Int { completions.count }

    init(queue: DispatchQueue, maxConnects: Int) {
        self.queue = queue
        self.multi = curl_multi_init()
        self.timer = DispatchSource.makeTimerSource(queue: queue)
        precondition(multi != nil, "curl_multi_init failed")
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ferry_multi_setopt_socket_cb(multi, Self.socketCallback)
        _ = ferry_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = ferry_multi_setopt_timer_cb(multi, Self.timerCallback)
        _ = ferry_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
        _ = ferry_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(8, maxConnects))
        _ = ferry_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        timer.setEventHandler { [unowned self] in
            socketAction(ferry_socket_timeout(), 0)
        }
        timer.schedule(deadline: .distantFuture)
        sourceGroup.enter()
        timer.setCancelHandler { [sourceGroup] in sourceGroup.leave() }
        timer.resume()
    }

    /// Sets the connection cache size (call when the concurrency changes).
    func setMaxConnects(_ n: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let multi else { return }
        _ = ferry_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(8, n))
    }

    /// Adds a prepared easy handle; `completion` runs on the queue with libcurl's result, after the handle was
    /// removed from the multi.
    func add(_ easy: CurlEasy, completion: @escaping (CURLcode) -> Void) throws(CurlError) {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(!closed, "CurlMulti used after close")
        easy.setSocketCallbacks(multi: Unmanaged.passUnretained(self).toOpaque())
        let code = curl_multi_add_handle(multi, easy.handle)
        guard code == CURLM_OK else { throw CurlError(multi: code, call: "curl_multi_add_handle") }
        completions[easy.handle] = completion
    }

    /// Hands a running easy handle's completion to a new owner (a transfer's first exchange becoming the first
    /// segment of a segmented download). Allowed inside libcurl callbacks: nothing is added or removed.
    func replaceCompletion(of easy: CurlEasy, with completion: @escaping (CURLcode) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard completions[easy.handle] != nil else { return }
        completions[easy.handle] = completion
    }

    /// Removes an easy handle that has not completed (pause, cancel, shutdown). Its completion is not called.
    func remove(_ easy: CurlEasy) {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(!insideCurl, "curl_multi_remove_handle inside a libcurl callback")
        guard completions.removeValue(forKey: easy.handle) != nil else { return }
        curl_multi_remove_handle(multi, easy.handle)
    }

    /// Resumes a transfer its write callback paused. libcurl may call the write callback from inside.
    func unpause(_ easy: CurlEasy) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard completions[easy.handle] != nil else { return }
        insideCurl = true
        let result = curl_easy_pause(easy.handle, ferry_pause_cont())
        insideCurl = false
        afterDelivery?()
        if result != CURLE_OK, let completion = completions.removeValue(forKey: easy.handle) {
            // A callback refused the data libcurl had held back (the body reached its segment's end: the exchange
            // is cut there). libcurl 7.88 returns that error without ending the transfer or scheduling it again, so
            // the handle sat in the multi until an old timer of its own fired (the connect timeout, 15 s after its
            // start) or for good: a rate-limited split download stayed `downloading` at 100% (issue 30). It ends
            // here, with the error libcurl would have reported.
            curl_multi_remove_handle(multi, easy.handle)
            completion(result)
        }
        // Unpausing may have expired timers or finished the transfer.
        collectFinished()
    }

    /// Cleans the multi up (closing cached connections), cancels the timer and every source, and calls `done` on
    /// the queue once every cancel handler ran and every descriptor is closed. Remove all handles first.
    func close(_ done: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { queue.async(execute: done); return }
        closed = true
        for handle in completions.keys { curl_multi_remove_handle(multi, handle) }
        completions.removeAll()
        let handle = multi
        multi = nil  // callbacks during the cleanup see a closed multi and do not call back into it
        insideCurl = true
        curl_multi_cleanup(handle)  // closes cached connections through the close-socket callback
        insideCurl = false
        for watcher in watchers.values { watcher.closeWhenIdle() }
        watchers.removeAll()
        // Sockets libcurl never registered and never closed (should not happen) are closed here.
        for socket in ownedSockets { Foundation.close(socket) }
        ownedSockets.removeAll()
        timer.cancel()
        sourceGroup.notify(queue: queue, execute: done)
    }

    // MARK: driving libcurl

    private func socketAction(_ socket: Int32, _ mask: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let multi else { return }
        var running: Int32 = 0
        insideCurl = true
        curl_multi_socket_action(multi, socket, mask, &running)
        insideCurl = false
        afterDelivery?()
        collectFinished()
    }

    /// Reads libcurl's completion messages, copying their fields, then removes and completes each handle.
    private func collectFinished() {
        guard let multi else { return }
        var done: [(UnsafeMutableRawPointer, CURLcode)] = []
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            done.append((easy, message.pointee.data.result))
        }
        for (easy, result) in done {
            guard let completion = completions.removeValue(forKey: easy) else { continue }
            curl_multi_remove_handle(multi, easy)
            completion(result)
        }
    }

    // MARK: callbacks from libcurl (on the queue, inside a libcurl call)

    fileprivate func watch(socket: Int32, what: Int32, socketp: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            guard let watcher = watchers[socket] else { return }
            watcher.stopWatching()
            if !ownedSockets.contains(socket) { watchers[socket] = nil }
            if multi != nil { curl_multi_assign(multi, socket, nil) }
            return
        }
        let watcher: SocketWatcher
        if let socketp {
            watcher = Unmanaged<SocketWatcher>.fromOpaque(socketp).takeUnretainedValue()
        } else if let existing = watchers[socket] {
            watcher = existing
            if multi != nil { curl_multi_assign(multi, socket, Unmanaged.passUnretained(watcher).toOpaque()) }
        } else {
            guard multi != nil else { return }
            watcher = SocketWatcher(socket: socket, ownedByFerry: ownedSockets.contains(socket), queue: queue, group: sourceGroup)
            watchers[socket] = watcher
            curl_multi_assign(multi, socket, Unmanaged.passUnretained(watcher).toOpaque())
        }
        let wantRead = what == CURL_POLL_IN || what == CURL_POLL_INOUT
        let wantWrite = what == CURL_POLL_OUT || what == CURL_POLL_INOUT
        watcher.watch(read: wantRead, write: wantWrite) { [unowned self] mask in
            socketAction(socket, mask)
        }
    }

    fileprivate func schedule(timeoutMilliseconds: Int) {
        if timeoutMilliseconds < 0 {
            timer.schedule(deadline: .distantFuture)
        } else {
            // 0 means "as soon as possible": the timer fires from the queue, never from inside this callback.
            timer.schedule(deadline: .now() + .milliseconds(timeoutMilliseconds))
        }
    }

    /// Records a socket Ferry opened for libcurl.
    func socketOpened(_ socket: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        ownedSockets.insert(socket)
    }

    /// libcurl wants a socket closed: close it now, or after its watcher's sources were cancelled.
    func closeSocket(_ socket: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        ownedSockets.remove(socket)
        if let watcher = watchers.removeValue(forKey: socket) {
            if multi != nil { curl_multi_assign(multi, socket, nil) }
            watcher.closeWhenIdle()
        } else {
            Foundation.close(socket)
        }
    }

    private static let socketCallback: curl_socket_callback = { _, socket, what, userp, socketp in
        guard let userp else { return 0 }
        Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().watch(socket: socket, what: what, socketp: socketp)
        return 0
    }

    private static let timerCallback: curl_multi_timer_callback = { _, timeout, userp in
        guard let userp else { return 0 }
        Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().schedule(timeoutMilliseconds: timeout)
        return 0
    }
}
