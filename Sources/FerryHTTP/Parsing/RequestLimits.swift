/// Size limits applied while parsing a request head. Exceeding one answers 414 or 431 and closes.
public struct RequestLimits: Sendable, Equatable {
    /// Longest request line (method, target, version), in bytes, without CRLF. Beyond it: 414.
    public var requestLine: Int
    /// Longest header block (all field lines with their CRLFs), in bytes. Beyond it: 431.
    public var headerBlock: Int
    /// Most header fields in one request. Beyond it: 431.
    public var headerCount: Int

    public init(requestLine: Int = 8 * 1024, headerBlock: Int = 64 * 1024, headerCount: Int = 100) {
        self.requestLine = requestLine
        self.headerBlock = headerBlock
        self.headerCount = headerCount
    }
}
