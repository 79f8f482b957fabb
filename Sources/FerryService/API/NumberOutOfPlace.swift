import Foundation

/// The first number in a JSON body that no field of the API can take: every number the API reads is a whole number
/// that fits 64 bits. Found for the error message only, after the decoder refused the body; pure.
struct NumberOutOfPlace: Equatable, Sendable {
    /// Where it is, as the decoder's messages name fields (`'maxBytesPerSecond'`, `'[2].priority'`).
    var path: String
    /// The number as the client wrote it, roughly (`1e+30`, `1.5`).
    var text: String
    /// Fractional (1.5) rather than too large (1e30).
    var isFractional: Bool

    var sentence: String {
        isFractional ? "'\(path)' must be a whole number, not \(text)"
            : "'\(path)' is out of range: \(text) is beyond a 64-bit whole number"
    }

    /// The first such number in `bytes`, depth first, or nil when the body is not JSON or holds none.
    static func find(in bytes: [UInt8]) -> NumberOutOfPlace? {
        guard let root = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else { return nil }
        return find(in: root, path: [])
    }

    private static func find(in value: Any, path: [String]) -> NumberOutOfPlace? {
        switch value {
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                if let found = find(in: object[key]!, path: path + [key]) { return found }
            }
        case let array as [Any]:
            for (index, item) in array.enumerated() {
                if let found = find(in: item, path: path + ["[\(index)]"]) { return found }
            }
        case let number as NSNumber where ["d", "f"].contains(String(cString: number.objCType)):
            let double = number.doubleValue
            let name = path.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
            if double.rounded() != double { return NumberOutOfPlace(path: name, text: "\(double)", isFractional: true) }
            if !(double >= -9.223372036854775808e18 && double < 9.223372036854775808e18) {
                return NumberOutOfPlace(path: name, text: "\(double)", isFractional: false)
            }
        default:
            break
        }
        return nil
    }
}
