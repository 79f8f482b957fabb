import FerryStore
import Testing
@testable import FerryService

/// `--store` / `FERRY_STORE`: sqlite by default, or a PostgreSQL URL whose password is never shown.
@Suite("Configuration: the job store")
struct StoreSettingTests {
    @Test func sqliteIsTheDefaultAndMayBeNamed() throws {
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: [:]).store == .sqlite)
        #expect(try ServiceConfiguration.resolve(flags: [.store: "SQLite"], environment: [:]).store == .sqlite)
        #expect(ServiceConfiguration.Setting.store.environmentName == "FERRY_STORE")
    }

    @Test func aPostgresURLFromTheFlagOrItsVariable() throws {
        let url = "postgres://ferry:s3cret@db.internal:5433/jobs?sslmode=require"
        let fromFlag = try ServiceConfiguration.resolve(flags: [.store: url], environment: ["FERRY_STORE": "sqlite"])
        #expect(fromFlag.store == .postgres(try #require(PostgresLocation(url))))
        let fromEnvironment = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_STORE": "postgresql://h/db"])
        #expect(fromEnvironment.store.description == "postgresql://h/db")
    }

    @Test func thePasswordIsNeverShown() throws {
        let setting = try #require(StoreSetting("postgres://ferry:s3cret@db:5432/jobs?password=other&sslmode=require"))
        #expect(setting.description == "postgres://***@db:5432/jobs?password=***&sslmode=require")
        #expect(!"\(setting)".contains("s3cret") && !"\(setting)".contains("other"))
        // Printed or dumped inside the whole configuration, too.
        var configuration = ServiceConfiguration()
        configuration.store = setting
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), dumped] {
            #expect(text.contains("***@db:5432") && !text.contains("s3cret"), "\(text)")
        }
    }

    @Test func anythingElseIsRefusedWithoutItsPassword() {
        for text in ["mysql://u:hunter2@db/jobs", "postgres://u:hunter2@db:5432/jobs?no_such_option=1", "", "postgres"] {
            #expect(StoreSetting(text) == nil, "\(text)")
        }
        do {
            _ = try ServiceConfiguration.resolve(flags: [.store: "mysql://u:hunter2@db/jobs"], environment: [:])
            Issue.record("a MySQL URL was accepted")
        } catch {
            #expect(error.setting == "--store")
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("postgres://"))
        }
    }
}
