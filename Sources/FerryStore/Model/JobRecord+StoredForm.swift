import Foundation

extension JobRecord {
    /// This record as a store keeps it: dates rounded to the millisecond.
    public var storedForm: JobRecord {
        var copy = self
        copy.createdAt = StoredDate.normalize(createdAt)
        copy.startedAt = startedAt.map(StoredDate.normalize)
        copy.finishedAt = finishedAt.map(StoredDate.normalize)
        copy.updatedAt = StoredDate.normalize(updatedAt)
        return copy
    }
}
