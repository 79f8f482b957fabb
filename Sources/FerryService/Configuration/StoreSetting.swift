import FerryCore
import FerryStore

/// Where `ferry serve` keeps its jobs (`--store` / `FERRY_STORE`, API.md "Several nodes"): the SQLite database in
/// the spool (`sqlite`, the default), or a PostgreSQL database given by URL. A plain value; its `description` never
/// shows a password.
public enum StoreSetting: Sendable, Equatable, CustomStringConvertible {
    /// `ferry.db` in the spool (`SQLiteJobStore`).
    case sqlite
    /// `postgres://user:password@host:port/database` (`PostgresJobStore`).
    case postgres(PostgresLocation)

    /// `sqlite` (any case), or a `postgres://`/`postgresql://` URL libpq can read; nil for anything else.
    public init?(_ text: String) {
        if text.lowercased() == "sqlite" {
            self = .sqlite
        } else if let location = PostgresLocation(text) {
            self = .postgres(location)
        } else {
            return nil
        }
    }

    /// What logs and errors show: `sqlite`, or the URL with its password hidden (`postgres://***@host/db`).
    public var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres(let location): location.redacted
        }
    }
}
