/// One call of aria2's RPC as parsed from its request object: the id, the method and the parameters, with an
/// `aria2.*` call's `"token:<secret>"` first parameter taken off into `secret`. Pure.
struct Aria2Call: Sendable, Equatable {
    /// A request object that is not a call: the error to answer, with the id to answer it under (`.null` if none).
    struct Refusal: Error, Equatable {
        let id: RPCValue
        let error: Aria2Error
    }

    let id: RPCValue
    let method: String
    let params: Aria2Params
    /// The secret of `"token:<secret>"` (aria2.* methods only); nil when the first parameter is not one.
    let secret: String?

    init(id: RPCValue, method: String, params: [RPCValue]) {
        self.id = id
        self.method = method
        var params = params
        var secret: String?
        if method.hasPrefix("aria2."), let first = params.first?.string, first.hasPrefix("token:") {
            secret = String(first.dropFirst("token:".count))
            params.removeFirst()
        }
        self.secret = secret
        self.params = Aria2Params(params)
    }

    /// The call in a request object, as aria2 reads one: an object with `method` (a string) and `id` (any value),
    /// `params` an array when present; `jsonrpc` is not checked.
    static func parse(_ value: RPCValue) throws(Refusal) -> Aria2Call {
        guard let object = value.object else { throw Refusal(id: .null, error: .invalidRequest) }
        guard let id = object["id"] else { throw Refusal(id: .null, error: .invalidRequest) }
        guard let method = object["method"]?.string else { throw Refusal(id: id, error: .invalidRequest) }
        var params: [RPCValue] = []
        if let given = object["params"], given != .null {
            guard let array = given.array else { throw Refusal(id: id, error: .invalidParams) }
            params = array
        }
        return Aria2Call(id: id, method: method, params: params)
    }

    /// A call of `system.multicall`'s list: `{"methodName", "params"}`; nil when it is not a struct.
    static func multicallEntry(_ value: RPCValue, id: RPCValue) -> Result<Aria2Call, Aria2Error> {
        guard let object = value.object, let method = object["methodName"]?.string else {
            return .failure(Aria2Error("system.multicall expected struct."))
        }
        guard let given = object["params"] else { return .success(Aria2Call(id: id, method: method, params: [])) }
        guard let params = given.array else { return .failure(.invalidParams) }
        return .success(Aria2Call(id: id, method: method, params: params))
    }
}

/// The parameters of a call (the secret already taken off), read with aria2's checks and wording: a position counts
/// from the first parameter after the secret. Pure.
struct Aria2Params: Sendable, Equatable {
    let values: [RPCValue]

    init(_ values: [RPCValue]) { self.values = values }

    var count: Int { values.count }

    func value(_ index: Int) -> RPCValue? { index < values.count ? values[index] : nil }

    func string(_ index: Int) throws(Aria2Error) -> String {
        guard let value = value(index) else { throw .missing(at: index) }
        guard let text = value.string else { throw .wrongType(at: index) }
        return text
    }

    func int(_ index: Int) throws(Aria2Error) -> Int64 {
        guard let value = value(index) else { throw .missing(at: index) }
        guard let number = value.int else { throw .wrongType(at: index) }
        return number
    }

    /// A gid parameter: 16 hex digits (lower-cased); "Invalid GID" otherwise.
    func gid(_ index: Int) throws(Aria2Error) -> String {
        let text = try string(index)
        guard JobGID.isWellFormed(text) else { throw .invalidGID(text) }
        return text.lowercased()
    }

    /// An optional array of strings (`keys`, `uris`); nil when absent.
    func strings(_ index: Int) throws(Aria2Error) -> [String]? {
        guard let value = value(index) else { return nil }
        guard let array = value.array else { throw .wrongType(at: index) }
        var strings: [String] = []
        for item in array {
            guard let text = item.string else { throw .wrongType(at: index) }
            strings.append(text)
        }
        return strings
    }

    /// An optional struct of options; nil when absent.
    func options(_ index: Int) throws(Aria2Error) -> [String: RPCValue]? {
        guard let value = value(index) else { return nil }
        guard let object = value.object else { throw .wrongType(at: index) }
        return object
    }
}
