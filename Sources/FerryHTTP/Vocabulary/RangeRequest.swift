/// `Range: bytes=...` evaluation (RFC 9110 14.1.2 and 14.2).
///
/// - `a-b`, `a-` and suffix `-n` specs; whitespace around commas allowed; the unit is case-insensitive.
/// - A spec with `a > b` makes the whole header invalid (`.none`).
/// - More than `maxRanges` (64) specs: `.none` (serve the whole file, as RFC 9110 allows).
/// - When two satisfiable ranges overlap or touch, all ranges are sorted and coalesced (a defence against
///   amplification); otherwise the requested order is kept.
public enum RangeRequest {
    public static let maxRanges = 64

    public static func parse(_ header: String, length: Int64) -> RangeResult {
        let trimmed = ASCII.trimmingWhitespace(Substring(header))
        guard let eq = trimmed.firstIndex(of: "="),
              ASCII.equalsIgnoringCase(String(ASCII.trimmingWhitespace(trimmed[..<eq])), "bytes") else { return .none }
        let specs = trimmed[trimmed.index(after: eq)...].split(separator: ",", omittingEmptySubsequences: false)
            .map { ASCII.trimmingWhitespace($0) }
            .filter { !$0.isEmpty }
        guard !specs.isEmpty, specs.count <= maxRanges else { return .none }
        var ranges: [ClosedRange<Int64>] = []
        for spec in specs {
            guard let dash = spec.firstIndex(of: "-") else { return .none }
            let firstText = spec[..<dash]
            let lastText = spec[spec.index(after: dash)...]
            if firstText.isEmpty {
                guard let suffix = digits(lastText) else { return .none }
                if suffix > 0 && length > 0 { ranges.append(max(0, length - suffix)...(length - 1)) }
            } else {
                guard let first = digits(firstText) else { return .none }
                var last = Int64.max
                if !lastText.isEmpty {
                    guard let value = digits(lastText), value >= first else { return .none }
                    last = value
                }
                if first < length { ranges.append(first...min(last, length - 1)) }
            }
        }
        guard !ranges.isEmpty else { return .unsatisfiable }
        return .satisfiable(coalesceIfOverlapping(ranges))
    }

    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }

    static func coalesceIfOverlapping(_ ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        guard ranges.count > 1 else { return ranges }
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var overlapping = false
        for i in 1..<sorted.count where sorted[i].lowerBound <= sorted[i - 1].upperBound + 1 { overlapping = true }
        guard overlapping else { return ranges }
        var merged: [ClosedRange<Int64>] = [sorted[0]]
        for range in sorted.dropFirst() {
            let last = merged[merged.count - 1]
            if range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
