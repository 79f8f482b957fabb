import Foundation

/// What `ferry add` sends: one URL as a single object (answered `201` with the job), several as a JSON array
/// (answered `200` with one job or error per item).
public enum Submission: Sendable, Equatable {
    case single(JobSubmission)
    case batch([JobSubmission])

    /// The request body, keys sorted so the same command always sends the same bytes.
    public var body: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data?
        switch self {
        case .single(let one): data = try? encoder.encode(one)
        case .batch(let many): data = try? encoder.encode(many)
        }
        // Strings, integers and booleans always encode.
        return data.map(Array.init) ?? []
    }

    public var items: [JobSubmission] {
        switch self {
        case .single(let one): [one]
        case .batch(let many): many
        }
    }
}
