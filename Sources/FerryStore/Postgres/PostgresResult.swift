import CPostgres

/// The rows of one statement's result (libpq's `PGresult`), freed with it.
///
/// Made and read on the owning store's queue; never shared. Columns are read by position, in the order of the
/// statement's select list, in the format each arrived in (`PQfformat`): text, where `bytea` values are in the
/// server's hex form (`\x0a1b`) and decoded here, or binary (`execute(binaryResults: true)`), where they are the
/// bytes themselves and `bigint` is 8 bytes in network order.
final class PostgresResult {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { PQclear(handle) }

    var rowCount: Int { Int(PQntuples(handle)) }

    /// Rows an INSERT, UPDATE or DELETE touched.
    var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) != 0
    }

    private func isBinary(_ column: Int) -> Bool {
        PQfformat(handle, Int32(column)) == 1
    }

    /// The value's bytes as they arrived; nil for NULL.
    private func raw<R>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R?) -> R? {
        guard !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { body(UnsafeBufferPointer(start: $0, count: length)) }
    }

    func string(_ row: Int, _ column: Int) -> String? {
        raw(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    func int64(_ row: Int, _ column: Int) -> Int64? {
        guard isBinary(column) else { return string(row, column).flatMap { Int64($0) } }
        return raw(row, column) { bytes in
            guard bytes.count == 8 || bytes.count == 4 else { return nil }
            let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return bytes.count == 8 ? Int64(bitPattern: value) : Int64(Int32(bitPattern: UInt32(value)))
        }
    }

    /// A `bytea` column: the bytes (the hex form decoded, in text format); nil for NULL or text not of that form.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        let binary = isBinary(column)
        return raw(row, column) { binary ? Array($0) : Self.decodeHex($0) }
    }

    /// `\x` followed by an even number of hex digits.
    static func decodeHex(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0
        else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
