/// What an SFTP server's host key, as libcurl checked it against the known-hosts file, means for the exchange
/// (pure): only a key the file holds for that host and port is accepted; otherwise the exchange fails with
/// `host_key_unknown`, saying why. Asked inside libcurl's callback, on the engine queue.
enum HostKeyCheck {
    /// Nil when the key is accepted.
    /// - Parameters:
    ///   - place: the server's `host:port`; `knownHosts`: the file's path (`--ssh-known-hosts`).
    static func failure(_ match: CurlEasy.HostKeyMatch, place: String, knownHosts file: String) -> FailureCause? {
        switch match {
        case .known:
            nil
        case .unknown:
            .hostKeyRejected("the SFTP server's host key for \(place) is not in \(file) (--ssh-known-hosts)")
        case .changed:
            .hostKeyRejected(
                "the SFTP server's host key for \(place) differs from the one in \(file): it changed, or another server answers")
        }
    }
}
