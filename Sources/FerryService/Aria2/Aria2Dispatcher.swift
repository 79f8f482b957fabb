import Foundation

/// Routes each call of aria2's RPC to its method, after `Aria2Authorization`; answers `system.multicall` call by call.
/// Stateless.
struct Aria2Dispatcher: Sendable {
    let queries: Aria2Queries
    let actions: Aria2Actions

    /// The answer to one call.
    func answer(_ call: Aria2Call, authorization: Aria2Authorization) async -> Result<RPCValue, Aria2Error> {
        let access: JobAccess
        do throws(Aria2Error) {
            access = try authorization.check(call)
        } catch {
            return .failure(error)
        }
        // The call's operations see, create and change only what its principal may (`JobAccess`, as the REST API).
        return await JobAccess.$current.withValue(access) {
            do throws(Aria2Error) {
                return .success(try await run(call, authorization: authorization))
            } catch {
                return .failure(error)
            }
        }
    }

    private func run(_ call: Aria2Call, authorization: Aria2Authorization) async throws(Aria2Error) -> RPCValue {
        let params = call.params
        switch call.method {
        case "aria2.addUri": return try await actions.addUri(params)
        case "aria2.addTorrent": throw Aria2Error("BitTorrent is not supported: Ferry downloads URLs")
        case "aria2.addMetalink": throw Aria2Error("Metalink is not supported: Ferry downloads URLs")
        case "aria2.remove", "aria2.forceRemove": return try await actions.remove(params)
        case "aria2.pause", "aria2.forcePause": return try await actions.pause(params)
        case "aria2.pauseAll", "aria2.forcePauseAll": return await actions.all(pausing: true)
        case "aria2.unpause": return try await actions.unpause(params)
        case "aria2.unpauseAll": return await actions.all(pausing: false)
        case "aria2.changePosition": return try await actions.changePosition(params)
        case "aria2.changeUri": return try await actions.changeUri(params)
        case "aria2.changeOption": return try await actions.changeOption(params)
        case "aria2.changeGlobalOption": return try await actions.changeGlobalOption(params)
        case "aria2.purgeDownloadResult": return try await actions.purgeDownloadResult()
        case "aria2.removeDownloadResult": return try await actions.removeDownloadResult(params)
        case "aria2.tellStatus": return try queries.tellStatus(params)
        case "aria2.tellActive": return try queries.tellActive(params)
        case "aria2.tellWaiting": return try queries.tellPage(params, stopped: false)
        case "aria2.tellStopped": return try queries.tellPage(params, stopped: true)
        case "aria2.getUris": return try queries.getUris(params)
        case "aria2.getFiles": return try queries.getFiles(params)
        case "aria2.getServers": return try queries.getServers(params)
        case "aria2.getPeers": return try queries.getPeers(params)
        case "aria2.getOption": return try queries.getOption(params)
        case "aria2.getGlobalOption": return await queries.getGlobalOption()
        case "aria2.getGlobalStat": return queries.getGlobalStat()
        case "aria2.getVersion": return Aria2Queries.version
        case "aria2.getSessionInfo": return queries.sessionInfo
        case "aria2.saveSession": return .string("OK")
        case "aria2.shutdown", "aria2.forceShutdown":
            throw Aria2Error("\(call.method) is refused: Ferry is stopped as a service, not over the RPC")
        case "system.listMethods": return .array(Aria2Methods.all.map(RPCValue.string))
        case "system.listNotifications": return .array(Aria2Methods.notifications.map(RPCValue.string))
        case "system.multicall": return try await multicall(params, id: call.id, authorization: authorization)
        default: throw .noSuchMethod(call.method)
        }
    }

    /// Each call's result wrapped in a one-element array, each failure as its error object, in order (as aria2).
    private func multicall(_ params: Aria2Params, id: RPCValue, authorization: Aria2Authorization) async throws(Aria2Error)
        -> RPCValue
    {
        guard let entries = params.value(0) else { throw .missing(at: 0) }
        guard let list = entries.array else { throw .wrongType(at: 0) }
        var answers: [RPCValue] = []
        answers.reserveCapacity(list.count)
        for entry in list {
            switch Aria2Call.multicallEntry(entry, id: id) {
            case .failure(let error): answers.append(error.value)
            case .success(let call) where call.method == "system.multicall":
                answers.append(Aria2Error("Recursive system.multicall forbidden.").value)
            case .success(let call):
                switch await answer(call, authorization: authorization) {
                case .success(let result): answers.append(.array([result]))
                case .failure(let error): answers.append(error.value)
                }
            }
        }
        return .array(answers)
    }

    /// One answer object, keys in aria2's order: `{"id", "jsonrpc": "2.0", "result" | "error"}`.
    static func write(id: RPCValue, _ outcome: Result<RPCValue, Aria2Error>, into json: inout JSONWriter) {
        json.beginObject()
        json.key("id")
        id.write(into: &json)
        json.field("jsonrpc", "2.0")
        switch outcome {
        case .success(let result):
            json.key("result")
            result.write(into: &json)
        case .failure(let error):
            json.key("error")
            error.value.write(into: &json)
        }
        json.endObject()
    }

    /// A random id for `getSessionInfo`, one per process (40 hex digits, as aria2's).
    static func newSessionID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Secret.hex((0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

extension Aria2Dispatcher {
    /// How an HTTP answer to a body of calls went (the controller chooses the status from it, as aria2 does).
    enum Outcome: Equatable {
        /// Not JSON at all.
        case parseError
        /// One call, answered with a result (nil) or this error.
        case single(failure: Aria2Error?)
        /// An array of calls.
        case batch
    }

    /// Answers a body of calls (one call or a batch array) with the JSON to send. In a batch, an item that is not an
    /// object is left out of the answer, as aria2 1.36 does.
    func respond(to body: [UInt8], authorization: Aria2Authorization) async -> (Outcome, [UInt8]) {
        var json = JSONWriter()
        guard let value = RPCValue.parse(body) else {
            Self.write(id: .null, .failure(.parse), into: &json)
            return (.parseError, json.bytes)
        }
        guard let items = value.array else {
            let outcome = await respond(toCall: value, authorization: authorization)
            // A list already written goes into an answer made big enough at once (not grown, copy after copy).
            if case .success(.json(let written)) = outcome.result { json = JSONWriter(capacity: written.count + 256) }
            Self.write(id: outcome.id, outcome.result, into: &json)
            if case .failure(let error) = outcome.result { return (.single(failure: error), json.bytes) }
            return (.single(failure: nil), json.bytes)
        }
        json.beginArray()
        for item in items where item.object != nil {
            let outcome = await respond(toCall: item, authorization: authorization)
            Self.write(id: outcome.id, outcome.result, into: &json)
        }
        json.endArray()
        return (.batch, json.bytes)
    }

    /// The id to answer under and the answer to one request object.
    func respond(toCall value: RPCValue, authorization: Aria2Authorization) async -> (id: RPCValue, result: Result<RPCValue, Aria2Error>) {
        do throws(Aria2Call.Refusal) {
            let call = try Aria2Call.parse(value)
            return (call.id, await answer(call, authorization: authorization))
        } catch {
            return (error.id, .failure(error.error))
        }
    }

    /// The call of `GET /jsonrpc?method=M&id=I&params=<base64 of the JSON params array>`; nil when one is missing or
    /// `params` is not base64 of a JSON array (aria2 then answers "Invalid Request." with a null id).
    static func call(method: String?, id: String?, params: String?) -> Aria2Call? {
        guard let method, let id else { return nil }
        var values: [RPCValue] = []
        if let params, !params.isEmpty {
            guard let bytes = base64(params), let array = RPCValue.parse(bytes)?.array else { return nil }
            values = array
        }
        return Aria2Call(id: .string(id), method: method, params: values)
    }

    /// Standard or URL-safe base64, padding optional; a `+` a query decoder turned into a space counts as `+`.
    static func base64(_ text: String) -> [UInt8]? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 == " " ? "+" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
