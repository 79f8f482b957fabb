import FerryCore

/// What the service asks the engine to upload: a finished file and where it goes (API `deliver`).
public struct DeliverySpec: Sendable {
    public enum Method: Sendable, Equatable {
        /// The file is the raw request body (`CURLOPT_UPLOAD`), with its `Content-Length` and `Content-Type`.
        case put
        /// `multipart/form-data`: the text `fields` in order, then the file in the part named `field`.
        case post(field: String, fields: [(name: String, value: String)])

        public static func == (a: Method, b: Method) -> Bool {
            switch (a, b) {
            case (.put, .put): return true
            case (.post(let f1, let x1), .post(let f2, let x2)):
                return f1 == f2 && x1.map(\.name) == x2.map(\.name) && x1.map(\.value) == x2.map(\.value)
            default: return false
            }
        }
    }

    /// The job id.
    public var id: String
    /// The target, parsed and checked by the service (the destination guard applies again to every address
    /// connected; redirects are not followed).
    public var url: SubmittedURL
    public var method: Method
    /// Request headers for the target (filtered like the origin's: `RequestHeaderFilter`).
    public var headers: [(name: String, value: String)]
    /// The finished file and what is known of it.
    public var path: String
    public var size: Int64
    public var filename: String
    public var contentType: String?
    /// The job's own speed limit, which the upload keeps too (the engine-wide one applies as well).
    public var maxBytesPerSecond: Int64?

    public init(id: String, url: SubmittedURL, method: Method, headers: [(name: String, value: String)] = [], path: String,
                size: Int64, filename: String, contentType: String? = nil, maxBytesPerSecond: Int64? = nil) {
        self.id = id
        self.url = url
        self.method = method
        self.headers = headers
        self.path = path
        self.size = size
        self.filename = filename
        self.contentType = contentType
        self.maxBytesPerSecond = maxBytesPerSecond
    }
}
