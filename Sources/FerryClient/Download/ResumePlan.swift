import Foundation

/// How `ferry get` goes about a local file that may already hold some of the bytes. Pure.
public enum ResumePlan: Sendable, Equatable {
    /// Download the whole file (nothing usable on disk).
    case fromStart
    /// Ask for the bytes from `offset` on (`Range: bytes=offset-` with `If-Range`), appending to the local file.
    case resume(from: Int64)
    /// The local file is as long as the remote one: check its digest; download again only if it differs.
    case verifyExisting

    /// - Parameters:
    ///   - localSize: the local file's size, nil when there is none.
    ///   - remoteLength: the content's `Content-Length`.
    ///   - validator: the content's `ETag`; without one a resume cannot be made safe, so it starts over.
    public static func decide(localSize: Int64?, remoteLength: Int64, validator: String?) -> ResumePlan {
        guard let localSize, localSize > 0 else { return .fromStart }
        if localSize == remoteLength { return .verifyExisting }
        if localSize > remoteLength { return .fromStart }
        guard let validator, !validator.isEmpty, !validator.hasPrefix("W/") else { return .fromStart }
        return .resume(from: localSize)
    }

    /// The start of a `206`'s `Content-Range: bytes first-last/total`, nil when it is not that shape.
    public static func rangeStart(_ contentRange: String?) -> Int64? {
        guard let contentRange else { return nil }
        let text = contentRange.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash])
    }
}
