/// A route pattern such as "/api/v1/jobs/:id/content" or "/static/*path", matched against raw path segments.
/// Immutable once made; pure.
struct RoutePattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    let text: String
    let segments: [Segment]
    /// The UTF-8 bytes of each literal segment (empty for the others), compared without decoding.
    private let literalBytes: [[UInt8]]
    private let hasRest: Bool

    init(_ text: String) {
        precondition(text.hasPrefix("/"), "route pattern must start with /: \(text)")
        self.text = text
        let parts = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        segments = parts.enumerated().map { index, part in
            if part.hasPrefix(":") && part.count > 1 { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") {
                precondition(index == parts.count - 1, "*rest must be the last segment: \(text)")
                return .rest(String(part.dropFirst()))
            }
            return .literal(String(part))
        }
        literalBytes = segments.map { if case .literal(let literal) = $0 { Array(literal.utf8) } else { [] } }
        hasRest = segments.last.map { if case .rest = $0 { true } else { false } } ?? false
    }

    /// Whether `path` matches. Makes nothing: compares bytes (a segment with `%` is decoded first).
    func matches(_ path: PathSegments) -> Bool {
        if !hasRest && path.count != segments.count { return false }
        for index in segments.indices {
            switch segments[index] {
            case .rest:
                return true
            case .literal(let literal):
                guard index < path.count, path.segment(index, equals: literalBytes[index], decoded: literal) else { return false }
            case .parameter:
                guard index < path.count, !path.isEmpty(index) else { return false }
            }
        }
        return path.count == segments.count
    }

    /// Path parameters (percent-decoded) of a `path` that `matches`.
    func parameters(_ path: PathSegments) -> [String: String] {
        var parameters: [String: String] = [:]
        for index in segments.indices {
            switch segments[index] {
            case .rest(let name):
                if !name.isEmpty { parameters[name] = index < path.count ? path.decoded(from: index) : "" }
            case .parameter(let name):
                parameters[name] = path.decoded(index)
            case .literal:
                break
            }
        }
        return parameters
    }

    /// Path parameters when `path` (raw segments after the leading "/") matches, else nil.
    func match(_ path: String) -> [String: String]? {
        PathSegments.with(path) { matches($0) ? parameters($0) : nil }
    }

    /// Orders patterns by specificity: at the first differing segment, literal beats parameter beats rest.
    func isMoreSpecific(than other: RoutePattern) -> Bool {
        func rank(_ segment: Segment?) -> Int {
            switch segment {
            case .literal: return 3
            case .parameter: return 2
            case .rest: return 1
            case nil: return 0
            }
        }
        for i in 0..<max(segments.count, other.segments.count) {
            let a = rank(i < segments.count ? segments[i] : nil)
            let b = rank(i < other.segments.count ? other.segments[i] : nil)
            if a != b { return a > b }
        }
        return false
    }

    var description: String { text }
}
