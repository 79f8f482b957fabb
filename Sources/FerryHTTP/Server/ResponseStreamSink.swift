/// Receives a stream's news on the connection's queue.
protocol ResponseStreamSink: AnyObject {
    /// New bytes, a finish or an abort are waiting in `stream`.
    func streamDidChange(_ stream: ResponseStream)
}
