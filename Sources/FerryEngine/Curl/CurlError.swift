import CCurl

/// A libcurl failure with its origin: the easy or multi code and the call that returned it.
struct CurlError: Error, CustomStringConvertible, Sendable {
    /// The `CURLcode` (easy interface) or `CURLMcode` (multi interface) as a number.
    let code: Int32
    /// The libcurl function, e.g. `curl_easy_setopt(CURLOPT_URL)`.
    let call: String
    let isMulti: Bool

    init(easy code: CURLcode, call: String) {
        self.code = Int32(code.rawValue)
        self.call = call
        self.isMulti = false
    }

    init(multi code: CURLMcode, call: String) {
        self.code = Int32(code.rawValue)
        self.call = call
        self.isMulti = true
    }

    var description: String {
        if isMulti {
            return "\(call) failed: \(String(cString: curl_multi_strerror(CURLMcode(code)))) (CURLMcode \(code))"
        }
        return "\(call) failed: \(Self.text(CURLcode(UInt32(code)))) (CURLcode \(code))"
    }

    /// libcurl's own sentence for an easy-interface code.
    static func text(_ code: CURLcode) -> String { String(cString: curl_easy_strerror(code)) }
}
