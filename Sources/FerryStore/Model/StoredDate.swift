import Foundation

/// How stores keep dates: Unix-epoch seconds rounded to the millisecond.
///
/// Every store rounds the dates of what it is given (`insert`, `update`, `saveIdempotencyRecord`) with
/// `normalize`, so a record read back compares equal to `storedForm` of the record written, whatever the backend
/// (SQLite keeps a `REAL`, PostgreSQL would keep a `timestamptz` with microseconds). The API shows milliseconds too.
///
/// The rounding goes through an integer millisecond count, so it is idempotent and the `Double` written to a
/// database reproduces the very same `Date` when read back.
public enum StoredDate {
    /// Whole milliseconds since 1970-01-01T00:00:00Z.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date for a millisecond count.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `date` rounded to the millisecond.
    public static func normalize(_ date: Date) -> Date {
        self.date(milliseconds: milliseconds(date))
    }

    /// Seconds since 1970 (with millisecond precision), as written to a `REAL` column.
    public static func seconds(_ date: Date) -> Double {
        Double(milliseconds(date)) / 1000
    }

    /// The date for seconds read from a `REAL` column.
    public static func date(seconds: Double) -> Date {
        date(milliseconds: Int64((seconds * 1000).rounded()))
    }
}
