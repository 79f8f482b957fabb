import Foundation

/// The opaque `list` cursor: base64url (no padding) of `"s:<sequence>"`, the sequence of the last job on a page.
///
/// Opaque to clients so the encoding can change; shared by every store so a cursor means the same everywhere.
/// A pure value; safe anywhere.
public struct JobCursor: Equatable, Sendable {
    /// The page ends with the job of this sequence; the next page starts after it.
    public var sequence: Int64

    public init(sequence: Int64) {
        self.sequence = sequence
    }

    /// The cursor's text form.
    public var encoded: String {
        Data("s:\(sequence)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes a cursor made by `encoded`.
    /// - Throws: `JobStoreError.invalidCursor` for anything else.
    public init(decoding text: String) throws(JobStoreError) {
        guard !text.isEmpty, text.count <= 64,
              text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { throw .invalidCursor(text) }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let plain = String(data: data, encoding: .utf8),
              plain.hasPrefix("s:"),
              case let digits = plain.dropFirst(2),
              !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let sequence = Int64(digits)
        else { throw .invalidCursor(text) }
        // Only the exact spelling `encoded` produces ("s:007" or padding variants are not ours).
        guard JobCursor(sequence: sequence).encoded == text else { throw .invalidCursor(text) }
        self.sequence = sequence
    }
}
