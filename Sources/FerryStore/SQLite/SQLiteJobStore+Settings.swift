extension SQLiteJobStore {
    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            try connection.withStatement("SELECT name, value FROM settings", operation: "read settings") { statement in
                var rows: [(name: String?, value: Int64?)] = []
                while try statement.step() { rows.append((statement.string("name"), statement.int64("value"))) }
                return try StoredSettings(rows: rows)
            }
        }
    }

    public func saveSettings(_ settings: StoredSettings) async throws {
        let rows = settings.rows
        guard !rows.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("save settings") {
                for (name, value) in rows {
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
