extension PostgresJobStore {
    public func value(forKey key: String) async throws -> String? {
        try await perform { connection in
            let result = try connection.execute("SELECT value FROM meta WHERE key = $1", [.text(key)],
                                                operation: "read meta value")
            return result.rowCount > 0 ? result.string(0, 0) : nil
        }
    }

    public func setValue(_ value: String, forKey key: String) async throws {
        try await perform { connection in
            _ = try connection.execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [.text(key), .text(value)], operation: "write meta value")
        }
    }
}
