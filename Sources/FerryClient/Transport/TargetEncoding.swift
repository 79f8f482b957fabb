/// Percent-encoding for the pieces of a request target. Pure.
public enum TargetEncoding {
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// One path segment (a job id): everything but unreserved characters is encoded, "/" included.
    public static func segment(_ text: String) -> String { encode(text, keeping: []) }

    /// One query value: like a segment, but "," stays readable (`state=failed,paused`).
    public static func queryValue(_ text: String) -> String { encode(text, keeping: [UInt8(ascii: ",")]) }

    /// `?name=value&…` for the pairs whose value is not nil; "" when none is.
    public static func query(_ pairs: [(String, String?)]) -> String {
        let parts = pairs.compactMap { name, value in value.map { "\(name)=\(queryValue($0))" } }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    private static func encode(_ text: String, keeping extra: Set<UInt8>) -> String {
        var out = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) || extra.contains(byte) {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }
}
