import Foundation
@testable import FerryService

/// Event factories shared by the events tests.
enum EventFixture {
    static func job(_ id: Int64, _ jobID: String, _ note: String = "") -> ServerEvent {
        ServerEvent(id: id, kind: .job, jobID: jobID, data: Array(#"{"id":"\#(jobID)","note":"\#(note)"}"#.utf8))
    }

    static func progress(_ id: Int64, _ jobID: String, bytes: Int = 0) -> ServerEvent {
        ServerEvent(id: id, kind: .progress, jobID: jobID, data: Array(#"{"id":"\#(jobID)","bytesReceived":\#(bytes)}"#.utf8))
    }

    static func removed(_ id: Int64, _ jobID: String) -> ServerEvent {
        ServerEvent(id: id, kind: .removed, jobID: jobID, data: Array(#"{"id":"\#(jobID)"}"#.utf8))
    }
}

/// A small deterministic generator (SplitMix64) so randomized tests replay exactly from their seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
