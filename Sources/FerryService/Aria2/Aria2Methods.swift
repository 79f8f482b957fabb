/// The method names of aria2's RPC that Ferry answers (aria2 1.36's `system.listMethods`, in its order), which of them
/// only read, and its notifications. Pure.
enum Aria2Methods {
    static let all = [
        "aria2.addUri", "aria2.addTorrent", "aria2.getPeers", "aria2.addMetalink", "aria2.remove", "aria2.pause",
        "aria2.forcePause", "aria2.pauseAll", "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll",
        "aria2.forceRemove", "aria2.changePosition", "aria2.tellStatus", "aria2.getUris", "aria2.getFiles",
        "aria2.getServers", "aria2.tellActive", "aria2.tellWaiting", "aria2.tellStopped", "aria2.getOption",
        "aria2.changeUri", "aria2.changeOption", "aria2.getGlobalOption", "aria2.changeGlobalOption",
        "aria2.purgeDownloadResult", "aria2.removeDownloadResult", "aria2.getVersion", "aria2.getSessionInfo",
        "aria2.shutdown", "aria2.forceShutdown", "aria2.getGlobalStat", "aria2.saveSession", "system.multicall",
        "system.listMethods", "system.listNotifications",
    ]

    static let known = Set(all)

    /// The methods the read-only token may call: they change nothing.
    static let reading: Set<String> = [
        "aria2.getPeers", "aria2.tellStatus", "aria2.getUris", "aria2.getFiles", "aria2.getServers",
        "aria2.tellActive", "aria2.tellWaiting", "aria2.tellStopped", "aria2.getOption", "aria2.getGlobalOption",
        "aria2.getVersion", "aria2.getSessionInfo", "aria2.getGlobalStat", "system.listMethods",
        "system.listNotifications",
    ]

    /// Methods aria2 answers without the secret.
    static let open: Set<String> = ["system.listMethods", "system.listNotifications"]

    static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
        "aria2.onDownloadError", "aria2.onBtDownloadComplete",
    ]
}

/// Whether one call may run, from what its request carries (API.md, "aria2 JSON-RPC", Secret): the call's
/// `"token:<secret>"` or the request's `Authorization: Bearer`; in open mode neither is needed, but a request from
/// another site's page (`crossSite`) is refused unless it carries a valid secret or bearer token. The read-only token
/// may call only `Aria2Methods.reading`. "Unauthorized" is checked before anything else about the call. The call then
/// runs as the credential's principal (`JobAccess`): an API key's secret sees and acts on that key's jobs only. Pure.
struct Aria2Authorization: Sendable {
    /// No token is configured.
    let isOpen: Bool
    /// The request's `Origin` (or `Sec-Fetch-Site`) names another site.
    let crossSite: Bool
    /// The request's valid bearer token (the token, the read token or an API key); nil without one.
    let bearer: AccessGuard.Credential?
    /// What a secret stands for (`AccessGuard.credential(ofSecret:)`).
    let credentialOfSecret: @Sendable (String) -> AccessGuard.Credential?

    /// Who the call runs as; throws "Unauthorized" when it may not run.
    func check(_ call: Aria2Call) throws(Aria2Error) -> JobAccess {
        // Unknown methods answer "No such method" only to a caller who may call methods at all.
        let credential: AccessGuard.Credential?
        if isOpen {
            credential = crossSite ? nil : .open
        } else {
            credential = call.secret.flatMap(credentialOfSecret) ?? bearer
        }
        if Aria2Methods.open.contains(call.method) || call.method == "system.multicall" {
            return JobAccess(principal: credential?.principal ?? .administrator)
        }
        guard let credential else { throw .unauthorized }
        if credential.access == .readOnly, !Aria2Methods.reading.contains(call.method) { throw .unauthorized }
        return JobAccess(principal: credential.principal)
    }
}

extension Aria2Authorization {
    /// Who the first call with a valid secret in a message of calls (one or a batch) speaks for, if any: a WebSocket
    /// then gets that principal's notifications.
    func provenAccess(in body: [UInt8]) -> JobAccess? {
        guard let value = RPCValue.parse(body) else { return nil }
        for object in value.array ?? [value] {
            guard let call = try? Aria2Call.parse(object), let secret = call.secret,
                  let credential = credentialOfSecret(secret) else { continue }
            return JobAccess(principal: credential.principal)
        }
        return nil
    }
}
