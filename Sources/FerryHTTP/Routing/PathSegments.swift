/// A raw request path (still percent-encoded) seen as the segments between its slashes, without copying: byte
/// ranges into the path's UTF-8. Valid only inside `with(_:_:)`. A path not starting with "/" has no segments;
/// "/" has one empty segment.
struct PathSegments {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Start offset of each segment; the segment ends one byte before the next start (or at the end).
    private let starts: UnsafeBufferPointer<Int>

    var count: Int { starts.count }

    /// Calls `body` with the segments of `rawPath`.
    static func with<R>(_ rawPath: String, _ body: (PathSegments) -> R) -> R {
        var path = rawPath
        return path.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "/") else {
                return withUnsafeTemporaryAllocation(of: Int.self, capacity: 0) { none in
                    body(PathSegments(bytes: bytes, starts: UnsafeBufferPointer(none)))
                }
            }
            var slashes = 0
            for byte in bytes where byte == UInt8(ascii: "/") { slashes += 1 }
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: slashes) { starts in
                var n = 0
                for index in bytes.indices where bytes[index] == UInt8(ascii: "/") {
                    starts[n] = index + 1
                    n += 1
                }
                return body(PathSegments(bytes: bytes, starts: UnsafeBufferPointer(starts)))
            }
        }
    }

    private func range(_ index: Int) -> Range<Int> {
        let start = starts[index]
        let end = index + 1 < starts.count ? starts[index + 1] - 1 : bytes.count
        return start..<end
    }

    func isEmpty(_ index: Int) -> Bool { range(index).isEmpty }

    /// Whether segment `index`, percent-decoded, is `literal` (given also as its UTF-8 `literalBytes`).
    func segment(_ index: Int, equals literalBytes: [UInt8], decoded literal: String) -> Bool {
        let raw = UnsafeBufferPointer(rebasing: bytes[range(index)])
        if raw.elementsEqual(literalBytes) { return true }
        guard raw.contains(UInt8(ascii: "%")) else { return false }
        return PercentDecoding.decode(String(decoding: raw, as: UTF8.self)) == literal
    }

    /// Segment `index`, percent-decoded.
    func decoded(_ index: Int) -> String {
        PercentDecoding.decode(String(decoding: UnsafeBufferPointer(rebasing: bytes[range(index)]), as: UTF8.self))
    }

    /// Segments `index` to the last, joined by "/", percent-decoded.
    func decoded(from index: Int) -> String {
        PercentDecoding.decode(String(decoding: UnsafeBufferPointer(rebasing: bytes[starts[index]...]), as: UTF8.self))
    }
}
