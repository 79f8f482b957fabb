import Foundation

extension IdempotencyRecord {
    /// This record as a store keeps it: `createdAt` rounded to the millisecond.
    public var storedForm: IdempotencyRecord {
        var copy = self
        copy.createdAt = StoredDate.normalize(createdAt)
        return copy
    }
}
