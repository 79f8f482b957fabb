/// How a file is cut into the parts of an S3 multipart upload (pure).
///
/// Parts are `partSize` bytes, the last one shorter; the size grows when the file would need more than S3's
/// 10,000 parts, and never drops below S3's 5 MiB minimum for a part that is not the last. An empty file has no
/// parts (it is stored with one `PutObject`).
public struct PartPlan: Sendable, Equatable {
    public struct Part: Sendable, Equatable {
        /// 1...10000.
        public let number: Int
        public let offset: Int64
        public let length: Int64
    }

    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumParts: Int64 = 10_000

    public let parts: [Part]

    /// The size of every part but the last for a file of `size` bytes, `preferred` if S3's limits allow it.
    public static func partSize(for size: Int64, preferred: Int64) -> Int64 {
        max(preferred, Self.minimumPartSize, (max(0, size) + Self.maximumParts - 1) / Self.maximumParts)
    }

    public init(size: Int64, partSize: Int64) {
        guard size > 0 else { parts = []; return }
        let chosen = Self.partSize(for: size, preferred: partSize)
        var parts: [Part] = []
        var offset: Int64 = 0
        while offset < size {
            let length = min(chosen, size - offset)
            parts.append(Part(number: parts.count + 1, offset: offset, length: length))
            offset += length
        }
        self.parts = parts
    }
}
