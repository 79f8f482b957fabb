/// One request header a user asked Ferry to send to the origin, in the order given.
public struct HeaderField: Codable, Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
