/// A `multipart/byteranges` body (RFC 9110 14.6) over regions of one file, as `.parts` so nothing is loaded.
public enum MultipartByteRanges {
    /// - Parameters:
    ///   - ranges: satisfiable ranges (from `RangeRequest.parse`) within `0..<total`.
    ///   - contentType: the representation's type, repeated in each part.
    ///   - file: the file path.
    ///   - boundary: a boundary that does not occur in the file (e.g. random hex).
    /// - Returns: the response's `Content-Type`, the parts, and the exact body length.
    public static func body(ranges: [ClosedRange<Int64>], total: Int64, contentType: String, file: String,
                            boundary: String) -> (contentType: String, parts: [BodyPart], length: Int64) {
        var parts: [BodyPart] = []
        var length: Int64 = 0
        for (index, range) in ranges.enumerated() {
            let head = (index == 0 ? "" : "\r\n") + "--\(boundary)\r\nContent-Type: \(contentType)\r\n"
                + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(total)\r\n\r\n"
            let headBytes = Array(head.utf8)
            parts.append(.bytes(headBytes))
            let region = FileBody(path: file, offset: range.lowerBound, length: range.upperBound - range.lowerBound + 1)
            parts.append(.file(region))
            length += Int64(headBytes.count) + region.length
        }
        let tail = Array("\r\n--\(boundary)--\r\n".utf8)
        parts.append(.bytes(tail))
        length += Int64(tail.count)
        return (contentType: "multipart/byteranges; boundary=\(boundary)", parts: parts, length: length)
    }
}
