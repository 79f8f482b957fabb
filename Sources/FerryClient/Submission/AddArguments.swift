import FerryCore
import Foundation

/// `ferry add`'s arguments, turned into a `Submission`. Pure.
///
/// `--filename`, `--sha256`, `--checksum` and `--mirror` describe one file, so they are refused with several URLs (and
/// `--sha256` with `--checksum`: one expected digest); `--priority`,
/// `--max-speed`, `--connections`, `--paused`, `--header` and `--tag` apply to every URL. `--connections` (1-16) and
/// the speed limit (above 0) are checked here, before any request; priority bounds are the server's: its
/// `invalid_request` message is shown as is.
///
/// `--deliver-to` gives every job a `deliver` object (a `PUT` target names one file, so it takes a single URL;
/// `POST` targets may take several). `--method` (PUT or POST), `--field`, `--form-field` (POST only),
/// `--delivery-header` and `--delete-after` are refused without it; the target URL itself is the server's to check.
public struct AddArguments: Sendable, Equatable {
    /// The range of `connections` the API accepts (API.md, `POST /api/v1/jobs`).
    public static let connectionRange = 1...16

    public var urls: [String]
    public var filename: String?
    public var sha256: String?
    /// `--checksum ALGORITHM:HEX` as typed (`sha-512:9b71…`).
    public var checksum: String?
    public var priority: Int?
    /// `--max-speed`, already turned into bytes per second.
    public var maxBytesPerSecond: Int64?
    public var connections: Int?
    public var paused: Bool
    /// `Name: value` lines as typed.
    public var headers: [String]
    /// `--tag`s in the order given; the server checks them (at most 16, 1 to 64 characters each).
    public var tags: [String]
    /// `--deliver-to`: where to upload each finished file.
    public var deliverTo: String?
    /// `--method`: `PUT` or `POST` (any case).
    public var deliveryMethod: String?
    /// `--field`: the file's part name for `POST`.
    public var deliveryField: String?
    /// `--form-field`s as typed, `key=value`.
    public var formFields: [String]
    /// `--delivery-header`s as typed, `Name: value`.
    public var deliveryHeaders: [String]
    /// `--delete-after`.
    public var deleteAfter: Bool
    /// `--mirror`s: more URLs for the one file (the server checks them).
    public var mirrors: [String] = []

    public init(urls: [String], filename: String? = nil, sha256: String? = nil, checksum: String? = nil,
                priority: Int? = nil, maxBytesPerSecond: Int64? = nil, connections: Int? = nil, paused: Bool = false,
                headers: [String] = [], tags: [String] = [], deliverTo: String? = nil, deliveryMethod: String? = nil,
                deliveryField: String? = nil, formFields: [String] = [], deliveryHeaders: [String] = [],
                deleteAfter: Bool = false) {
        self.urls = urls
        self.filename = filename
        self.sha256 = sha256
        self.checksum = checksum
        self.priority = priority
        self.maxBytesPerSecond = maxBytesPerSecond
        self.connections = connections
        self.paused = paused
        self.headers = headers
        self.tags = tags
        self.deliverTo = deliverTo
        self.deliveryMethod = deliveryMethod
        self.deliveryField = deliveryField
        self.formFields = formFields
        self.deliveryHeaders = deliveryHeaders
        self.deleteAfter = deleteAfter
    }

    public func submission() throws(ClientError) -> Submission {
        guard !urls.isEmpty else { throw .usage("give at least one URL") }
        if urls.count > 1 {
            if filename != nil { throw .usage("--filename names one file: give a single URL with it") }
            if sha256 != nil { throw .usage("--sha256 checks one file: give a single URL with it") }
            if !mirrors.isEmpty { throw .usage("--mirror serves one file: give a single URL with it") }
            if checksum != nil { throw .usage("--checksum checks one file: give a single URL with it") }
        }
        if sha256 != nil, checksum != nil { throw .usage("--sha256 and --checksum are two ways to give one digest: give one") }
        var expected: Checksum?
        if let checksum {
            do { expected = try Checksum(parsing: checksum) } catch {
                throw .usage("--checksum: \(error) (got '\(TerminalText.sanitized(checksum))')")
            }
        }
        if let sha256 {
            guard sha256.count == 64, sha256.allSatisfy(\.isHexDigit) else {
                throw .usage("--sha256 must be 64 hexadecimal digits (got '\(sha256)')")
            }
        }
        if let connections, !Self.connectionRange.contains(connections) {
            throw .usage("--connections must be from \(Self.connectionRange.lowerBound) to "
                + "\(Self.connectionRange.upperBound) (got \(connections))")
        }
        if let maxBytesPerSecond, maxBytesPerSecond < 1 {
            throw .usage("--max-speed must be at least 1 byte per second (got \(maxBytesPerSecond))")
        }
        let parsedHeaders = try Self.parseHeaders(headers)
        let deliver = try delivery()
        let items = urls.map { url in
            JobSubmission(url: url, filename: filename, headers: parsedHeaders, sha256: sha256?.lowercased(),
                          checksum: expected.map(ChecksumSubmission.init), priority: priority,
                          maxBytesPerSecond: maxBytesPerSecond, connections: connections, paused: paused ? true : nil,
                          tags: tags.isEmpty ? nil : tags, deliver: deliver, mirrors: mirrors.isEmpty ? nil : mirrors)
        }
        return items.count == 1 ? .single(items[0]) : .batch(items)
    }

    /// The `deliver` object, or nil without `--deliver-to`.
    /// - Throws: `.usage` for a delivery option without `--deliver-to`, a method other than PUT or POST, `--field`
    ///   or `--form-field` with PUT, a `PUT` target for several URLs, or a malformed form field or header.
    func delivery() throws(ClientError) -> DeliverySubmission? {
        guard let deliverTo else {
            let given = [
                (deliveryMethod != nil, "--method"), (deliveryField != nil, "--field"), (!formFields.isEmpty, "--form-field"),
                (!deliveryHeaders.isEmpty, "--delivery-header"), (deleteAfter, "--delete-after"),
            ].filter(\.0).map(\.1)
            if let first = given.first { throw .usage("\(first) describes a delivery: give --deliver-to URL with it") }
            return nil
        }
        let target = deliverTo.trimmingCharacters(in: .whitespaces)
        guard !target.isEmpty else { throw .usage("--deliver-to needs the target's URL") }
        var method: String?
        if let deliveryMethod {
            let upper = deliveryMethod.uppercased()
            guard upper == "PUT" || upper == "POST" else {
                throw .usage("--method must be PUT or POST (got '\(deliveryMethod)')")
            }
            method = upper
        }
        let isPost = method == "POST"
        if !isPost {
            if deliveryField != nil { throw .usage("--field names the file's part of a POST: give --method POST with it") }
            if !formFields.isEmpty { throw .usage("--form-field is a part of a POST: give --method POST with it") }
            if urls.count > 1 {
                throw .usage("--deliver-to with PUT names one file: give a single URL (or --method POST for an upload endpoint)")
            }
        }
        if let deliveryField, deliveryField.isEmpty { throw .usage("--field needs a part name") }
        return DeliverySubmission(url: target, method: method, field: deliveryField,
                                  fields: try Self.parseFormFields(formFields),
                                  headers: try Self.parseHeaders(deliveryHeaders, option: "--delivery-header"),
                                  deleteAfter: deleteAfter ? true : nil)
    }

    /// `["key=value", …]` → `["key": "value"]` (the value may hold `=` and be empty); nil for none.
    /// - Throws: `.usage` for an entry without `=` or a key, or a key given twice.
    public static func parseFormFields(_ entries: [String]) throws(ClientError) -> [String: String]? {
        guard !entries.isEmpty else { return nil }
        var fields: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw .usage("--form-field must look like 'key=value' (got '\(entry)')")
            }
            let key = String(entry[..<equals])
            guard fields[key] == nil else { throw .usage("--form-field '\(key)' is given twice") }
            fields[key] = String(entry[entry.index(after: equals)...])
        }
        return fields
    }

    /// `["Name: value", …]` → `["Name": "value"]`; nil for none.
    /// - Parameter option: the option the lines came from, for messages.
    /// - Throws: `.usage` for a line without a colon or a name, or a name given twice (names are case-insensitive).
    public static func parseHeaders(_ lines: [String], option: String = "--header") throws(ClientError) -> [String: String]? {
        guard !lines.isEmpty else { return nil }
        var headers: [String: String] = [:]
        var seen: Set<String> = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw .usage("\(option) must look like 'Name: value' (got '\(line)')")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.contains(" ") else {
                throw .usage("\(option) must look like 'Name: value' (got '\(line)')")
            }
            guard seen.insert(name.lowercased()).inserted else {
                throw .usage("\(option) '\(name)' is given twice")
            }
            headers[name] = value
        }
        return headers
    }
}
