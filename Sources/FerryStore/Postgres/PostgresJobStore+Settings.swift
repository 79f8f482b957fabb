extension PostgresJobStore {
    /// Names of the rows of the `settings` table (as in `SQLiteJobStore`).
    private enum SettingName {
        static let maxBytesPerSecond = "max_bytes_per_second"
        static let maxConcurrent = "max_concurrent"
    }

    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            let result = try connection.execute("SELECT name, value FROM settings", operation: "read settings")
            var settings = StoredSettings()
            for row in 0..<result.rowCount {
                let value = result.int64(row, 1)
                switch result.string(row, 0) {
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

    public func saveSettings(_ settings: StoredSettings) async throws {
        var rows: [(String, Int64?)] = []
        if let rate = settings.maxBytesPerSecond { rows.append((SettingName.maxBytesPerSecond, rate)) }
        if let concurrent = settings.maxConcurrent { rows.append((SettingName.maxConcurrent, Int64(concurrent))) }
        guard !rows.isEmpty else { return }
        let changes = rows
        try await perform { connection in
            try connection.transaction("save settings") {
                for (name, value) in changes {
                    try connection.execute(
                        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                        [.text(name), PostgresParameter(value)], operation: "save setting \(name)")
                }
            }
        }
    }
}
