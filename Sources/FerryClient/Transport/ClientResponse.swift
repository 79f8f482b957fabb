/// A whole response, body collected.
public struct ClientResponse: Sendable {
    public var head: ResponseHead
    public var body: [UInt8]
    public var status: Int { head.status }
}
