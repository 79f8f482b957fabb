extension SQLiteJobStore {
    public func value(forKey key: String) async throws -> String? {
        try await perform { connection in
            try connection.withStatement("SELECT value FROM meta WHERE key = :key", operation: "read meta value") {
                try $0.bind(key, to: ":key")
                return try $0.step() ? $0.string("value") : nil
            }
        }
    }

    public func setValue(_ value: String, forKey key: String) async throws {
        try await perform { connection in
            try connection.run(
                "INSERT INTO meta (key, value) VALUES (:key, :value) ON CONFLICT (key) DO UPDATE SET value = :value",
                [":key": .text(key), ":value": .text(value)], operation: "write meta value")
        }
    }
}
