import CCurl

extension CurlEasy {
    /// The options every request Ferry sends to a server shares, whoever sends it: http and https only, never a
    /// proxy from `http_proxy`/`https_proxy`/`ALL_PROXY` (a destination guard would see only the proxy's address),
    /// redirects not followed unless the caller turns them on after this, a connect timeout, a stall timeout (less
    /// than `lowSpeedLimit` bytes per second for `lowSpeedTime` seconds), TCP keep-alive and Ferry's user agent.
    func applyBaseline(connectTimeout: Double, lowSpeedLimit: Int, lowSpeedTime: Int, userAgent: String) throws(CurlError) {
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_PROXY, "")
        try set(CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout * 1000))
        try set(CURLOPT_LOW_SPEED_LIMIT, lowSpeedLimit)
        try set(CURLOPT_LOW_SPEED_TIME, lowSpeedTime)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_USERAGENT, userAgent)
    }
}
