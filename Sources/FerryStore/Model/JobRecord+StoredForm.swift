import Foundation

extension JobRecord {
    /// This record as a store keeps it: dates rounded to the millisecond.
    public var storedForm: JobRecord {
        var copy = self
        copy.createdAt = StoredDate.normalize(createdAt)
        copy.updatedAt = StoredDate.normalize(updatedAt)
        // Only dates a job has: setting a detail makes a new box for the record's details.
        if let startedAt = self.startedAt { copy.startedAt = StoredDate.normalize(startedAt) }
        if let finishedAt = self.finishedAt { copy.finishedAt = StoredDate.normalize(finishedAt) }
        if let deliveredAt = self.delivery?.deliveredAt { copy.delivery?.deliveredAt = StoredDate.normalize(deliveredAt) }
        return copy
    }
}
