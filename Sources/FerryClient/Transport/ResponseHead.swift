/// The status line and headers of a response.
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public var headers: [ClientRequest.Header]

    public init(status: Int, headers: [ClientRequest.Header]) {
        self.status = status
        self.headers = headers
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
