extension SQLiteJobStore {
    /// Names of the rows of the `settings` table (schema 4).
    private enum SettingName {
        static let maxBytesPerSecond = "max_bytes_per_second"
        static let maxConcurrent = "max_concurrent"
    }

    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            try connection.withStatement("SELECT name, value FROM settings", operation: "read settings") { statement in
                var settings = StoredSettings()
                while try statement.step() {
                    let value = statement.int64("value")
                    switch statement.string("name") {
                    case SettingName.maxBytesPerSecond:
                        settings.maxBytesPerSecond = .some(value)
                    case SettingName.maxConcurrent:
                        guard let value else { throw JobStoreError.corrupt("the stored max_concurrent is NULL") }
                        settings.maxConcurrent = Int(value)
                    default:
                        continue  // a setting a newer Ferry stored
                    }
                }
                return settings
            }
        }
    }

    public func saveSettings(_ settings: StoredSettings) async throws {
        var rows: [(String, Int64?)] = []
        if let rate = settings.maxBytesPerSecond { rows.append((SettingName.maxBytesPerSecond, rate)) }
        if let concurrent = settings.maxConcurrent { rows.append((SettingName.maxConcurrent, Int64(concurrent))) }
        guard !rows.isEmpty else { return }
        let changes = rows
        try await perform { connection in
            try connection.transaction("save settings") {
                for (name, value) in changes {
                    try connection.withStatement(
                        "INSERT OR REPLACE INTO settings (name, value) VALUES (:name, :value)",
                        operation: "save setting \(name)"
                    ) { statement in
                        try statement.bind(name, to: ":name")
                        try statement.bind(value, to: ":value")
                        try statement.step()
                    }
                }
            }
        }
    }
}
