import Foundation

/// The fingerprint an `Idempotency-Key` is bound to: what a request asks for, not how its JSON
/// happened to be spelled. A client that retries by serializing the same object again may order keys
/// or space them differently; both spellings get the same fingerprint. A body that is not JSON is
/// fingerprinted as its raw bytes.
enum RequestFingerprint {
    static func of(method: String, path: String, body: [UInt8]) -> String {
        Secret.sha256Hex(Array("\(method) \(path)\n".utf8) + canonicalJSON(body))
    }

    /// `body` re-serialized with sorted keys and no insignificant white space, or `body` itself when
    /// it does not parse as JSON.
    static func canonicalJSON(_ body: [UInt8]) -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return Array(data)
    }
}
