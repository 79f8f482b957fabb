// FerryEngine: see docs/ARCHITECTURE.md.
import CCurl
import CCrypto

/// The libcurl version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.19 ...".
public func curlVersionDescription() -> String { String(cString: curl_version()) }
