/// How settings are kept in a store: one `settings` row per field that was saved, `(name, value)` with an integer
/// value (NULL for "no limit"). Pure; the same names in every store.
extension StoredSettings {
    enum RowName {
        static let maxBytesPerSecond = "max_bytes_per_second"
        static let maxConcurrent = "max_concurrent"
    }

    /// The rows to save: one per field that is set.
    var rows: [(name: String, value: Int64?)] {
        var rows: [(name: String, value: Int64?)] = []
        if let rate = maxBytesPerSecond { rows.append((RowName.maxBytesPerSecond, rate)) }
        if let concurrent = maxConcurrent { rows.append((RowName.maxConcurrent, Int64(concurrent))) }
        return rows
    }

    /// The settings the stored rows say; rows of names this Ferry does not know (a newer one stored them) are skipped.
    /// - Throws: `JobStoreError.corrupt` for a NULL `max_concurrent`.
    init(rows: [(name: String?, value: Int64?)]) throws {
        self.init()
        for row in rows {
            switch row.name {
            case RowName.maxBytesPerSecond:
                maxBytesPerSecond = .some(row.value)
            case RowName.maxConcurrent:
                guard let value = row.value else { throw JobStoreError.corrupt("the stored max_concurrent is NULL") }
                maxConcurrent = Int(value)
            default:
                continue
            }
        }
    }
}
