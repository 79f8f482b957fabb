import FerryCore

/// What to do with the final response to one segment request (`Range: bytes=a-b` with `If-Range`), decided
/// before any body byte is written.
///
/// Pure. Bytes of a segment are kept only when the origin confirms, with a 206 whose `Content-Range` is exactly
/// the range asked for (and the known total) and whose validators equal the known ones, that they come from the
/// same representation as every other segment; bytes are never spliced across versions.
enum SegmentResponse: Equatable, Sendable {
    /// Write the body at the requested offset.
    case accept
    /// The file changed (new validators, a different size, an unexpected range): every segment starts again from
    /// zero.
    case changed(reason: String)
    /// The origin answered the range request with the whole file although its validators did not change: it
    /// does not really serve ranges. Start again from zero with one connection.
    case rangesIgnored(reason: String)
    /// An error status; the body is discarded and the failure classified.
    case httpError(status: Int)

    /// - Parameters:
    ///   - requested: the bytes asked for, `[a, b + 1)`.
    ///   - total: the file's size as known from the first response.
    ///   - etag, lastModified: the validators known from the first response.
    ///   - head: the response.
    static func judge(requested: Range<Int64>, total: Int64, etag: String?, lastModified: String?, head: ResponseHead) -> SegmentResponse {
        let changedValidator = validatorChange(etag: etag, lastModified: lastModified, head: head)
        switch head.status {
        case 206:
            if let changedValidator { return .changed(reason: changedValidator) }
            guard let header = head.contentRange, let range = ContentRange.parse(header) else {
                return .changed(reason: "the origin answered a segment request with 206 and no usable Content-Range")
            }
            let asked = ContentRange(first: requested.lowerBound, last: requested.upperBound - 1, total: total)
            guard range == asked else {
                return .changed(reason: "the origin sent \(range.headerValue) for a request of \(asked.headerValue)")
            }
            return .accept
        case 200..<300:
            if let changedValidator { return .changed(reason: changedValidator) }
            if sameValidator(etag: etag, lastModified: lastModified, head: head) {
                return .rangesIgnored(reason: "the origin sent the whole file (\(head.status)) for a range request of an unchanged file")
            }
            return .changed(reason: "the origin sent the whole file (\(head.status)) instead of a range: it changed")
        case 416:
            return .changed(reason: "the origin cannot serve bytes \(requested.lowerBound)-\(requested.upperBound - 1) (416)")
        default:
            return .httpError(status: head.status)
        }
    }

    /// Why the response's validators differ from the known ones, or nil. Compares the ETag when both sides have
    /// one, else Last-Modified when both have it.
    private static func validatorChange(etag: String?, lastModified: String?, head: ResponseHead) -> String? {
        if let etag, let received = head.etag {
            return etag == received ? nil : "the ETag changed from \(etag) to \(received)"
        }
        if let lastModified, let received = head.lastModified {
            return lastModified == received ? nil : "Last-Modified changed from \(lastModified) to \(received)"
        }
        return nil
    }

    /// True when at least one validator is present on both sides and equal.
    private static func sameValidator(etag: String?, lastModified: String?, head: ResponseHead) -> Bool {
        if let etag, let received = head.etag { return etag == received }
        if let lastModified, let received = head.lastModified { return lastModified == received }
        return false
    }
}
