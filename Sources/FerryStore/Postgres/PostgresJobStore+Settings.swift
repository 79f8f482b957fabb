extension PostgresJobStore {
    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            let result = try connection.execute("SELECT name, value FROM settings", operation: "read settings")
            return try StoredSettings(rows: (0..<result.rowCount).map { (result.string($0, 0), result.int64($0, 1)) })
        }
    }

    static func saveSetting(name: String, value: Int64?, _ connection: PostgresConnection) throws {
        try connection.execute(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
            [.text(name), PostgresParameter(value)], operation: "save setting \(name)")
    }
}
