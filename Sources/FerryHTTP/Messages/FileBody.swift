/// A region of a file, opened when the response is sent. A failure to open before the head is sent answers 500;
/// later (or a file shorter than announced) aborts the connection.
public struct FileBody: Sendable, Equatable {
    public var path: String
    public var offset: Int64
    public var length: Int64

    public init(path: String, offset: Int64, length: Int64) {
        self.path = path
        self.offset = offset
        self.length = length
    }
}
