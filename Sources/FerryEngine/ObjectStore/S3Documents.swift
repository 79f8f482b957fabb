/// One part of a multipart upload as the store holds it: what `ListParts` lists, what `UploadPart` returns, and
/// what `CompleteMultipartUpload` is given; kept in an `ObjectUploadRecord` (as `{"number", "etag", "size"}`).
public struct UploadedPart: Equatable, Sendable, Codable {
    /// 1...10000.
    public var number: Int
    /// The store's ETag of the part, quotes included as the store wrote them.
    public var etag: String
    public var size: Int64

    public init(number: Int, etag: String, size: Int64) {
        self.number = number
        self.etag = etag
        self.size = size
    }
}

/// A multipart upload begun and neither completed nor aborted, as `ListMultipartUploads` lists it.
public struct UnfinishedUpload: Equatable, Sendable {
    public let key: String
    public let uploadID: String

    public init(key: String, uploadID: String) {
        self.key = key
        self.uploadID = uploadID
    }
}

/// The XML documents of the S3 calls Ferry makes: read from bytes, written to bytes. Pure.
enum S3Documents {
    /// The `<Error>` answer: code and message.
    struct ErrorBody: Equatable {
        var code: String
        var message: String
    }

    /// One page of `ListParts`.
    struct PartsPage: Equatable {
        var parts: [UploadedPart]
        /// The marker to ask the next page from; nil on the last page.
        var nextMarker: Int?
    }

    /// `<Error><Code>…</Code><Message>…</Message></Error>`, or nil when the bytes are not such a document.
    static func error(_ bytes: [UInt8]) -> ErrorBody? {
        guard let root = try? S3XML.parse(bytes), root.name == "Error", let code = root.value("Code"), !code.isEmpty else { return nil }
        return ErrorBody(code: code, message: root.value("Message") ?? "")
    }

    /// The `UploadId` of an `InitiateMultipartUploadResult`.
    static func uploadID(_ bytes: [UInt8]) throws(S3XMLError) -> String {
        let root = try expect("InitiateMultipartUploadResult", bytes)
        guard let id = root.value("UploadId"), !id.isEmpty else { throw S3XMLError(reason: "no UploadId", offset: 0) }
        return id
    }

    /// A `ListPartsResult` page: each `Part`'s number, ETag and size, and where the next page starts.
    static func partsPage(_ bytes: [UInt8]) throws(S3XMLError) -> PartsPage {
        let root = try expect("ListPartsResult", bytes)
        var parts: [UploadedPart] = []
        for part in root.children("Part") {
            guard let number = part.value("PartNumber").flatMap({ Int($0) }), (1...10_000).contains(number),
                  let size = part.value("Size").flatMap({ Int64($0) }), size >= 0,
                  let etag = part.value("ETag"), !etag.isEmpty else {
                throw S3XMLError(reason: "a Part lacks a valid PartNumber, Size or ETag", offset: 0)
            }
            parts.append(UploadedPart(number: number, etag: etag, size: size))
        }
        var nextMarker: Int?
        if root.value("IsTruncated") == "true" {
            guard let marker = root.value("NextPartNumberMarker").flatMap({ Int($0) }), marker > 0 else {
                throw S3XMLError(reason: "IsTruncated without a NextPartNumberMarker", offset: 0)
            }
            nextMarker = marker
        }
        return PartsPage(parts: parts, nextMarker: nextMarker)
    }

    /// The key and upload id of each `Upload` of a `ListMultipartUploadsResult` page.
    static func unfinishedUploads(_ bytes: [UInt8]) throws(S3XMLError) -> [UnfinishedUpload] {
        let root = try expect("ListMultipartUploadsResult", bytes)
        var uploads: [UnfinishedUpload] = []
        for upload in root.children("Upload") {
            guard let key = upload.value("Key"), !key.isEmpty, let id = upload.value("UploadId"), !id.isEmpty else {
                throw S3XMLError(reason: "an Upload lacks a Key or an UploadId", offset: 0)
            }
            uploads.append(UnfinishedUpload(key: key, uploadID: id))
        }
        return uploads
    }

    /// The ETag of a `CompleteMultipartUploadResult`. The store may answer 200 and an `<Error>` (the completion
    /// failed after the status was sent): the caller reads `error(_:)` first.
    static func completedETag(_ bytes: [UInt8]) throws(S3XMLError) -> String {
        let root = try expect("CompleteMultipartUploadResult", bytes)
        return root.value("ETag") ?? ""
    }

    /// The `ETag` of an `UploadPartCopy` answer (`CopyPartResult`).
    static func copiedPartETag(_ bytes: [UInt8]) throws(S3XMLError) -> String {
        let root = try expect("CopyPartResult", bytes)
        guard let etag = root.value("ETag"), !etag.isEmpty else { throw S3XMLError(reason: "CopyPartResult has no ETag", offset: 0) }
        return etag
    }

    /// The `CompleteMultipartUpload` request body: every part's number and ETag, in ascending part order.
    static func completion(_ parts: [UploadedPart]) -> [UInt8] {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts.sorted(by: { $0.number < $1.number }) {
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XML.escaped(part.etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        return Array(xml.utf8)
    }

    private static func expect(_ name: String, _ bytes: [UInt8]) throws(S3XMLError) -> S3XMLElement {
        let root = try S3XML.parse(bytes)
        guard root.name == name else { throw S3XMLError(reason: "expected <\(name)>, found <\(root.name)>", offset: 0) }
        return root
    }
}
