// FerryStore: see docs/ARCHITECTURE.md.
import CSQLite

/// The SQLite library version in use.
public func sqliteVersionDescription() -> String { String(cString: sqlite3_libversion()) }
