import FerryCore
import Foundation

/// What to do with a final response, decided from its status and headers before the first body byte is written.
///
/// Pure: `decide` is exhaustively unit-tested. The rule is that bytes are never spliced across versions of a
/// file: a body is appended to the bytes on disk only when the origin confirmed, with a 206 whose Content-Range
/// starts exactly there and whose total matches what was known, that it continues the same representation.
enum ResumeDecision: Equatable, Sendable {
    /// Write the body starting at `offset` (the bytes before it are kept). `total` is the whole file's size.
    case append(offset: Int64, total: Int64?)
    /// The origin sent the whole file although a range was asked for (it changed, or ignores ranges): discard
    /// the bytes on disk and write this body from zero.
    case replace(total: Int64?, reason: String)
    /// 416 whose `bytes */N` equals the bytes on disk: the file is already complete.
    case complete
    /// Unusable answer to a range request: stop, discard the bytes on disk, and ask again from zero.
    case restart(reason: String)
    /// An error status (4xx, 5xx, or a final 1xx/3xx): the body is discarded and the failure classified.
    case httpError(status: Int)
    /// The file is larger than the limit.
    case tooLarge(total: Int64, limit: Int64)

    /// - Parameters:
    ///   - requestedOffset: N when `Range: bytes=N-` was sent, else 0.
    ///   - knownTotal: the file size learnt earlier (resume validators), if any.
    static func decide(
        requestedOffset: Int64, knownTotal: Int64?, status: Int, contentRange: String?, contentLength: Int64?,
        maxFileSize: Int64?
    ) -> ResumeDecision {
        let decision = baseDecision(requestedOffset: requestedOffset, knownTotal: knownTotal, status: status, contentRange: contentRange, contentLength: contentLength)
        if let maxFileSize {
            switch decision {
            case .append(_, let total?) where total > maxFileSize: return .tooLarge(total: total, limit: maxFileSize)
            case .replace(let total?, _) where total > maxFileSize: return .tooLarge(total: total, limit: maxFileSize)
            default: break
            }
        }
        return decision
    }

    /// The same rule for a server that resumes by offset (FTP's `REST`, SFTP's seek) and answers with no status:
    /// it reports only the file's size (`reportedTotal`) and maybe its modification time. The bytes on disk are
    /// continued only when the size equals the one recorded when they were written (and the time, when both are
    /// known); a server that gives no size cannot confirm anything, so its file is fetched again from zero.
    /// - Parameters:
    ///   - requestedOffset: the offset asked for (`CURLOPT_RESUME_FROM_LARGE`), else 0.
    ///   - knownTotal, knownModified: what was recorded with the bytes on disk.
    static func decideByOffset(
        requestedOffset: Int64, knownTotal: Int64?, knownModified: String?, reportedTotal: Int64?,
        reportedModified: String?, maxFileSize: Int64?
    ) -> ResumeDecision {
        if let maxFileSize, let reportedTotal, reportedTotal > maxFileSize {
            return .tooLarge(total: reportedTotal, limit: maxFileSize)
        }
        guard requestedOffset > 0 else { return .append(offset: 0, total: reportedTotal) }
        guard let knownTotal else { return .restart(reason: "no size was recorded with the bytes on disk to resume safely") }
        guard let reportedTotal else { return .restart(reason: "the server gave no size to confirm the bytes on disk") }
        guard reportedTotal == knownTotal else {
            return .restart(reason: "the file's size changed from \(knownTotal) to \(reportedTotal)")
        }
        if let knownModified, let reportedModified, knownModified != reportedModified {
            return .restart(reason: "the file's modification time changed from \(knownModified) to \(reportedModified)")
        }
        if requestedOffset == reportedTotal { return .complete }
        guard requestedOffset < reportedTotal else { return .restart(reason: "the partial file is larger than the file") }
        return .append(offset: requestedOffset, total: reportedTotal)
    }

    private static func baseDecision(requestedOffset: Int64, knownTotal: Int64?, status: Int, contentRange: String?, contentLength: Int64?) -> ResumeDecision {
        switch status {
        case 206:
            guard let header = contentRange, let range = ContentRange.parse(header) else {
                return .restart(reason: "the origin answered 206 without a usable Content-Range")
            }
            if requestedOffset == 0 {
                guard range.first == 0 else { return .restart(reason: "the origin sent a range starting at \(range.first) that was not asked for") }
                return .append(offset: 0, total: range.total)
            }
            guard range.first == requestedOffset else {
                return .restart(reason: "the origin sent bytes from \(range.first), not from \(requestedOffset)")
            }
            if let knownTotal {
                guard range.total == knownTotal else {
                    let got = range.total.map(String.init) ?? "*"
                    return .restart(reason: "the file's size changed from \(knownTotal) to \(got)")
                }
            }
            return .append(offset: requestedOffset, total: range.total ?? knownTotal)
        case 416:
            guard requestedOffset > 0 else { return .httpError(status: 416) }
            if let total = unsatisfiedTotal(contentRange), total == requestedOffset, knownTotal == nil || knownTotal == total {
                return .complete
            }
            return .restart(reason: "the origin cannot serve bytes from \(requestedOffset) (416)")
        case 200..<300:
            let total = status == 204 ? 0 : contentLength
            if requestedOffset > 0 {
                return .replace(total: total, reason: "the origin sent the whole file (\(status)) instead of the rest: it changed or ignores ranges")
            }
            return .append(offset: 0, total: total)
        default:
            return .httpError(status: status)
        }
    }

    /// N from "bytes */N".
    static func unsatisfiedTotal(_ header: String?) -> Int64? {
        guard let header else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes") else { return nil }
        let rest = trimmed.dropFirst(5).trimmingCharacters(in: .whitespaces)
        guard rest.hasPrefix("*/") else { return nil }
        return Int64(rest.dropFirst(2))
    }
}
