/// The data of an `event: progress`: a download's numbers (`phase` `downloading`, or none from an older server),
/// or an onward delivery's (`phase` `delivering`: `bytesSent` and `bytesTotal` instead of the received bytes).
public struct ProgressUpdate: Sendable, Equatable, Decodable {
    public var id: String
    /// `downloading`, `delivering`, or nil (a server that predates delivery: a download).
    public var phase: String?
    public var bytesReceived: Int64
    public var bytesExpected: Int64?
    public var progress: Double?
    public var speed: Double?
    public var eta: Double?
    /// The upload's bytes sent so far (`phase` `delivering`).
    public var bytesSent: Int64?
    /// The upload's size (`phase` `delivering`).
    public var bytesTotal: Int64?

    public init(id: String, bytesReceived: Int64, bytesExpected: Int64? = nil, progress: Double? = nil,
                speed: Double? = nil, eta: Double? = nil) {
        self.id = id
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.progress = progress
        self.speed = speed
        self.eta = eta
    }

    /// An upload's numbers (`phase` `delivering`).
    public init(id: String, bytesSent: Int64, bytesTotal: Int64?, progress: Double? = nil, speed: Double? = nil,
                eta: Double? = nil) {
        self.id = id
        phase = "delivering"
        bytesReceived = 0
        self.bytesSent = bytesSent
        self.bytesTotal = bytesTotal
        self.progress = progress
        self.speed = speed
        self.eta = eta
    }

    /// Whether these are an onward delivery's numbers rather than the download's.
    public var isDelivery: Bool { phase == "delivering" }

    enum CodingKeys: String, CodingKey {
        case id, phase, bytesReceived, bytesExpected, progress, speed, eta, bytesSent, bytesTotal
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        phase = try c.decodeIfPresent(String.self, forKey: .phase)
        bytesSent = try c.decodeIfPresent(Int64.self, forKey: .bytesSent)
        bytesTotal = try c.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        // A delivery's event need not repeat the download's count.
        if phase == "delivering" {
            bytesReceived = try c.decodeIfPresent(Int64.self, forKey: .bytesReceived) ?? 0
        } else {
            bytesReceived = try c.decode(Int64.self, forKey: .bytesReceived)
        }
        bytesExpected = try c.decodeIfPresent(Int64.self, forKey: .bytesExpected)
        progress = try c.decodeIfPresent(Double.self, forKey: .progress)
        speed = try c.decodeIfPresent(Double.self, forKey: .speed)
        eta = try c.decodeIfPresent(Double.self, forKey: .eta)
    }
}
