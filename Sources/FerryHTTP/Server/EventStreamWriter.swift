import Dispatch

/// Server-Sent Events on top of a `ResponseStream`: a `retry:` line first, then a `: ping` comment every `heartbeat`
/// seconds until the stream closes. Thread-safe: it only writes to the (thread-safe) stream; its heartbeat timer runs
/// on a private queue and is cancelled when the stream closes.
public final class EventStreamWriter: @unchecked Sendable {
    public let stream: ResponseStream
    private let timerQueue = DispatchQueue(label: "ferry.http.sse-heartbeat")
    private var timer: DispatchSourceTimer?  // confined to timerQueue

    public init(stream: ResponseStream, heartbeat: Double = 15, retryMilliseconds: Int = 2000) {
        self.stream = stream
        stream.write(Array("retry: \(retryMilliseconds)\n\n".utf8))
        guard heartbeat > 0 else { return }
        let timer = DispatchSource.makeTimerSource(queue: timerQueue)
        timer.schedule(deadline: .now() + heartbeat, repeating: heartbeat, leeway: .milliseconds(100))
        timer.setEventHandler { [stream] in
            stream.write(Array(": ping\n\n".utf8))
        }
        timerQueue.sync { self.timer = timer }
        timer.resume()
        stream.onClose { [weak self] in self?.stopHeartbeat() }
    }

    /// Sends one event. `data` must be a single line (JSON); line breaks in it are sent as separate `data:` lines.
    public func send(id: String?, event: String, data: String) {
        var text = ""
        text.reserveCapacity(data.utf8.count + event.utf8.count + 32)
        if let id { text += "id: \(Self.singleLine(id))\n" }
        text += "event: \(Self.singleLine(event))\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: "
            text += line.hasSuffix("\r") ? line.dropLast() : line
            text += "\n"
        }
        text += "\n"
        stream.write(Array(text.utf8))
    }

    /// Sends a comment line (`: text`), ignored by clients.
    public func comment(_ text: String) {
        stream.write(Array(": \(Self.singleLine(text))\n\n".utf8))
    }

    /// Ends the event stream (the response body finishes; the connection may be reused).
    public func close() {
        stopHeartbeat()
        stream.finish()
    }

    public var isClosed: Bool { stream.isClosed }

    private func stopHeartbeat() {
        timerQueue.async {
            self.timer?.cancel()
            self.timer = nil
        }
    }

    private static func singleLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }

    /// A 200 `text/event-stream` response (no-cache, `X-Accel-Buffering: no`, chunked) whose body is driven by `start`.
    public static func response(heartbeat: Double = 15, _ start: @escaping @Sendable (EventStreamWriter) -> Void) -> HTTPResponse {
        HTTPResponse(
            status: .ok,
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"],
            body: .stream(length: nil) { stream in
                start(EventStreamWriter(stream: stream, heartbeat: heartbeat))
            })
    }
}
