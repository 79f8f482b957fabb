/// What to do with one body chunk of an exchange (`Exchange.step(forBody:segmentEnd:ceiling:)`).
enum BodyStep: Equatable, Sendable {
    /// Hand `count` bytes to the writer at `offset`. `last`: the segment's end is reached before the response's
    /// end, so the exchange is cut there on purpose.
    case write(offset: Int64, count: Int, last: Bool)
    /// Not part of the file (an error status's body, or a 416's): consume and drop it.
    case discard
    /// The segment's end was reached already (another connection took over the tail): stop, all is received.
    case cut
    /// Bytes past the size an FTP server reported (the file is longer than its `SIZE` said): consumed and
    /// dropped, only counted, so the failure can name how much the server sent (`FailureCause.sizeUnderstated`).
    case excess(count: Int)
    /// Stop the exchange for this reason.
    case fail(FailureCause)
}
