import FerryCore

/// One small request `RequestRunner` sends: a method, a URL checked at submit, header lines and a body held in
/// memory (a webhook notice). Redirects are never followed.
public struct OutgoingRequest: Sendable {
    public var method: String
    public var url: SubmittedURL
    /// "Name: value" lines, sent as given.
    public var headers: [String]
    public var body: [UInt8]

    public init(method: String = "POST", url: SubmittedURL, headers: [String], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
