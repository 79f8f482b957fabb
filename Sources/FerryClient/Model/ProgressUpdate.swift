/// The data of an `event: progress`.
public struct ProgressUpdate: Sendable, Equatable, Decodable {
    public var id: String
    public var bytesReceived: Int64
    public var bytesExpected: Int64?
    public var progress: Double?
    public var speed: Double?
    public var eta: Double?

    public init(id: String, bytesReceived: Int64, bytesExpected: Int64? = nil, progress: Double? = nil,
                speed: Double? = nil, eta: Double? = nil) {
        self.id = id
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.progress = progress
        self.speed = speed
        self.eta = eta
    }
}
