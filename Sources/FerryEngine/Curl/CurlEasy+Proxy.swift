import CCurl
import FerryCore

extension CurlEasy {
    /// Sends the request through `proxy` to the pinned addresses only: `CURLOPT_PROXY` (credentials from its URL),
    /// `CURLOPT_NOPROXY` empty (so no `no_proxy` variable makes libcurl connect directly), an HTTP `CONNECT` tunnel
    /// for http and https proxies (plain http origins too), and `CURLOPT_CONNECT_TO` naming the checked address for
    /// each pinned host, so the proxy connects to it instead of resolving the name. TLS to the origin still checks
    /// the URL's host name. Every socket libcurl opens then goes to the proxy, the operator's choice: the caller
    /// admits it without the destination guard, which ran on the pins.
    func route(through proxy: ProxySetting, pins: [DestinationPin]) throws(CurlError) {
        try set(CURLOPT_PROXY, proxy.url)
        try set(CURLOPT_NOPROXY, "")
        try set(CURLOPT_HTTPPROXYTUNNEL, proxy.tunnels ? 1 : 0)
        // The proxy's answer to CONNECT is not the origin's: keep it out of the header callback.
        try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        try setConnectTo(pins.map(\.connectTo))
    }

    /// libcurl's code and detail for an exchange through `proxy`, said as the proxy's failure where it is one: a
    /// proxy that answers what is not a proxy's answer makes libcurl 7.88 end a tunnel with
    /// `CURLE_BAD_FUNCTION_ARGUMENT` (no option is wrong: options are checked when set), which becomes `CURLE_PROXY`
    /// (a network error, retried); a `CURLE_PROXY` names the proxy (credentials hidden).
    static func throughProxy(_ proxy: ProxySetting, code: CURLcode, detail: String) -> (CURLcode, String) {
        switch code {
        case CURLE_BAD_FUNCTION_ARGUMENT:
            return (CURLE_PROXY, "the proxy \(proxy.redacted) answered something that is not a proxy's answer")
        case CURLE_PROXY:
            return (code, "the proxy \(proxy.redacted) failed: \(detail.isEmpty ? CurlError.text(code) : detail)")
        default:
            return (code, detail)
        }
    }
}
