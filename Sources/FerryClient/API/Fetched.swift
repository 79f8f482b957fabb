/// A decoded answer and the bytes it came from (for `--json`, which prints what the server sent).
public struct Fetched<Value: Sendable>: Sendable {
    public var value: Value
    public var body: [UInt8]
    public var status: Int
}
