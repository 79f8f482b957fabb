import CCurl
import Dispatch
import FerryCore
import Foundation

/// Downloads through `--proxy` with the destination guard kept. Everything here runs on `queue`.
///
/// libcurl connects only to the proxy, so the guard cannot run on the address connected. Instead, before a
/// request goes to a host, Ferry resolves it and pins the first address `AddressPolicy` allows
/// (`DestinationResolver`); the request then tells the proxy to connect to that address (`CurlEasy.route`). A
/// redirect to a host not pinned yet stops its exchange at the redirect's head (`watchHop`), before any connection
/// to that host; the host is pinned and the fetch sent again to the redirect's target (`followThroughProxy`),
/// counting against `maxRedirects`. Redirects between pinned hosts libcurl follows itself.
extension DownloadEngine {
    /// Whether `url`'s host is pinned for `transfer`. If not, pins it: the fetch waits (it may not connect) until
    /// the answer, then the run carries on, or the attempt fails (`forbidden_destination`, or a resolve failure).
    func readyThroughProxy(_ transfer: Transfer, _ fetch: SegmentFetch, url: String) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard configuration.proxy != nil, let parsed = try? SubmittedURL.parse(url) else { return true }
        let key = DestinationPin.key(host: parsed.host.serialized, port: parsed.effectivePort)
        if transfer.pins[key] != nil { return true }
        fetch.retryAt = .infinity
        DestinationResolver.pin(parsed, policy: configuration.destinations, queue: queue) { [weak self, weak transfer, weak fetch] result in
            guard let self, let transfer, let fetch, transfer.phase == .running, transfer.segmented?.owns(fetch) == true else { return }
            fetch.retryAt = nil
            switch result {
            case .success(let pin):
                transfer.pins[key] = pin
                self.fillConnections(transfer)
            case .failure(.forbidden(let detail)):
                self.attemptFailed(transfer, .forbiddenDestination(detail))
            case .failure(.unresolved(let detail)):
                self.attemptFailed(transfer, .curl(code: Int32(CURLE_COULDNT_RESOLVE_HOST.rawValue), detail: detail))
            }
        }
        return false
    }

    /// Reads one header line of a proxied exchange: at the end of a redirect's head whose target host is not pinned,
    /// remembers the target and returns false (the exchange stops before libcurl follows it).
    func watchHop(_ transfer: Transfer, _ fetch: SegmentFetch, _ line: String) -> Bool {
        if let status = ResponseHead.status(ofStatusLine: line) {
            fetch.hopStatus = status
            fetch.hopLocation = nil
            return true
        }
        if ResponseHead.isEndOfHeaders(line) {
            defer { fetch.hopStatus = nil; fetch.hopLocation = nil }
            guard let status = fetch.hopStatus, [301, 302, 303, 307, 308].contains(status), let location = fetch.hopLocation,
                  let current = fetch.easy?.effectiveURL else { return true }
            guard let target = URL(string: location, relativeTo: URL(string: current))?.absoluteURL.absoluteString,
                  let parsed = try? SubmittedURL.parse(target) else { return true }  // libcurl refuses it as usual
            guard transfer.pins[DestinationPin.key(host: parsed.host.serialized, port: parsed.effectivePort)] == nil else { return true }
            fetch.redirectToPin = parsed.normalized
            return false
        }
        if let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "location" {
            fetch.hopLocation = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return true
    }

    /// Sends the run's requests to a redirect's target from now on; its host is pinned first (`readyThroughProxy`).
    func followThroughProxy(_ transfer: Transfer, _ run: SegmentedDownload, to target: String) {
        transfer.proxyHops += 1
        guard transfer.proxyHops <= configuration.maxRedirects else {
            attemptFailed(transfer, .curl(code: Int32(CURLE_TOO_MANY_REDIRECTS.rawValue),
                                          detail: "more than \(configuration.maxRedirects) redirects"))
            return
        }
        logger.info("redirect through the proxy", metadata: ["id": "\(transfer.id)", "to": "\(SubmittedURL.redacting(target))"])
        run.requestURL = target
        fillConnections(transfer)
    }
}
