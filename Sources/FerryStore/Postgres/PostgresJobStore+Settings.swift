extension PostgresJobStore {
    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            let result = try connection.execute("SELECT name, value FROM settings", operation: "read settings")
            return try StoredSettings(rows: (0..<result.rowCount).map { (result.string($0, 0), result.int64($0, 1)) })
        }
    }

    public func saveSettings(_ settings: StoredSettings) async throws {
        let rows = settings.rows
        guard !rows.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("save settings") {
                for (name, value) in rows {
                    try connection.execute(
                        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                        [.text(name), PostgresParameter(value)], operation: "save setting \(name)")
                }
            }
        }
    }
}
