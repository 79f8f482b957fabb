import CCrypto
import Foundation

/// AWS Signature Version 4 of one S3 request, for the requests libcurl 7.88 cannot sign (pure: the time is given).
///
/// libcurl (`CURLOPT_AWS_SIGV4`) signs every other request. Its 7.88 release sorts the canonical headers as whole
/// `name:value` lines where SigV4 sorts them by name, so two headers where one's name is the other's followed by
/// `-` come out in the wrong order: `x-amz-copy-source-range:…` sorts before `x-amz-copy-source:…` (`-` is below
/// `:`), and every `UploadPartCopy` with a range gets `SignatureDoesNotMatch` (seen against SeaweedFS with
/// `curl --aws-sigv4` 7.88.1: `SignedHeaders=host;x-amz-copy-source-range;x-amz-copy-source;x-amz-date`; later
/// libcurl releases compare names only). `libcurlMisorders` says when a request is such a one; the client then
/// sends the lines `headers(…)` returns instead of asking libcurl to sign.
///
/// What is signed: the method, the URL's path and query exactly as sent (`ObjectStoreRequest` writes them
/// canonical already), the `Host` header (sent explicitly, so it is what was signed), `x-amz-content-sha256`,
/// `x-amz-date` and every header of the request.
struct SigV4Signature {
    let accessKeyID: String
    let secretAccessKey: String
    let region: String

    /// Whether libcurl 7.88 would put the request's signed headers in another order than SigV4's (with the `host`
    /// and `x-amz-date` headers it adds).
    static func libcurlMisorders(_ headers: [String]) -> Bool {
        let lines = (headers + ["host:", "x-amz-date:"]).map { line -> (name: String, line: String) in
            let name = line.prefix { $0 != ":" }.lowercased().trimmingCharacters(in: .whitespaces)
            let value = line.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
            return (name, name + ":" + value)
        }
        let byLine = lines.sorted { Array($0.line.utf8).lexicographicallyPrecedes(Array($1.line.utf8)) }.map(\.name)
        let byName = lines.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }.map(\.name)
        return byLine != byName
    }

    /// The header lines to send besides the request's own: `Host`, `x-amz-content-sha256`, `x-amz-date` and
    /// `Authorization`.
    /// - Parameters:
    ///   - url: the URL sent (`http(s)://host[:port]/path[?query]`).
    ///   - payload: the body, or nil to sign it as `UNSIGNED-PAYLOAD` (a streamed file).
    func headers(method: String, url: String, headers: [String], payload: [UInt8]?, date: Date) -> [String] {
        let (host, path, query) = Self.split(url)
        let payloadHash = payload.map { Self.hex(Self.sha256($0)) } ?? "UNSIGNED-PAYLOAD"
        let stamp = Self.timestamp(date)
        let day = String(stamp.prefix(8))
        var canonical: [(name: String, value: String)] = [("host", host), ("x-amz-content-sha256", payloadHash), ("x-amz-date", stamp)]
        for line in headers {
            let name = line.prefix { $0 != ":" }.lowercased().trimmingCharacters(in: .whitespaces)
            let value = line.drop { $0 != ":" }.dropFirst().split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            canonical.append((name, value))
        }
        canonical.sort { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        let signedHeaders = canonical.map(\.name).joined(separator: ";")
        let request = [method, path, query, canonical.map { "\($0.name):\($0.value)\n" }.joined(), signedHeaders, payloadHash]
            .joined(separator: "\n")
        let scope = "\(day)/\(region)/s3/aws4_request"
        let toSign = ["AWS4-HMAC-SHA256", stamp, scope, Self.hex(Self.sha256(Array(request.utf8)))].joined(separator: "\n")
        var key = Self.hmac(Array("AWS4\(secretAccessKey)".utf8), day)
        for part in [region, "s3", "aws4_request"] { key = Self.hmac(key, part) }
        let signature = Self.hex(Self.hmac(key, toSign))
        return [
            "Host: \(host)", "x-amz-content-sha256: \(payloadHash)", "x-amz-date: \(stamp)",
            "Authorization: AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)",
        ]
    }

    /// The authority, path (at least "/") and query of an absolute URL, as written.
    static func split(_ url: String) -> (host: String, path: String, query: String) {
        let rest = url.range(of: "://").map { url[$0.upperBound...] } ?? url[...]
        let host = rest.prefix { $0 != "/" && $0 != "?" }
        let target = rest.dropFirst(host.count)
        let path = target.prefix { $0 != "?" }
        let query = target.dropFirst(path.count).dropFirst()
        return (String(host), path.isEmpty ? "/" : String(path), String(query))
    }

    /// `YYYYMMDDTHHMMSSZ` in UTC.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        }
        return digest
    }

    private static func hmac(_ key: [UInt8], _ message: String) -> [UInt8] {
        let bytes = Array(message.utf8)
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = key.withUnsafeBufferPointer { k in
            bytes.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
