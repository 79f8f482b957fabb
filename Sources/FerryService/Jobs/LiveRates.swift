import FerryCore
import FerryStore
import Foundation

/// The numbers of a running transfer that are not stored: speed and time left.
struct LiveRates: Sendable, Equatable {
    var speed: Double = 0
    var eta: Double?
}
