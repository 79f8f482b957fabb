extension SQLiteJobStore {
    public func settings() async throws -> StoredSettings {
        try await perform { connection in
            try connection.withStatement("SELECT name, value FROM settings", operation: "read settings") { statement in
                try StoredSettings(rows: statement.rows { (name: $0.string("name"), value: $0.int64("value")) })
            }
        }
    }

    static func saveSetting(name: String, value: Int64?, _ connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO settings (name, value) VALUES (:name, :value)",
                           [":name": .text(name), ":value": .integer(value)], operation: "save setting \(name)")
    }
}
