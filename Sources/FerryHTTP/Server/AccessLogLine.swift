/// The access log's line for one exchange, e.g. `GET /api/v1/jobs/x 200 512 0.12ms 127.0.0.1:50000`: method, target
/// without its query, status, bytes sent, time from the end of the request head to the last byte in milliseconds
/// (two decimals, truncated), peer, and ` interrupted` when the connection closed before the response's end (a client
/// that gave up, a timeout). Pure; written into one byte buffer (a line per request must be cheap).
enum AccessLogLine {
    static func format(method: String, target: String, status: Int, bytes: Int64, micros: UInt64, remote: String,
                       interrupted: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(method.utf8.count + target.utf8.count + remote.utf8.count + 40)
        out.append(contentsOf: method.utf8)
        out.append(UInt8(ascii: " "))
        for byte in target.utf8 {
            if byte == UInt8(ascii: "?") { break }
            out.append(byte)
        }
        out.append(UInt8(ascii: " "))
        appendDecimal(UInt64(clamping: status), to: &out)
        out.append(UInt8(ascii: " "))
        if bytes < 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(bytes.magnitude, to: &out)
        out.append(UInt8(ascii: " "))
        appendDecimal(micros / 1000, to: &out)
        out.append(UInt8(ascii: "."))
        let hundredths = micros % 1000 / 10
        out.append(UInt8(ascii: "0") + UInt8(hundredths / 10))
        out.append(UInt8(ascii: "0") + UInt8(hundredths % 10))
        out.append(contentsOf: "ms ".utf8)
        out.append(contentsOf: remote.utf8)
        if interrupted { out.append(contentsOf: " interrupted".utf8) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
