/// A route pattern such as "/api/v1/jobs/:id/content" or "/static/*path", matched against raw path segments.
struct RoutePattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    let text: String
    let segments: [Segment]

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
    }

    /// Path parameters when `path` (raw segments after the leading "/") matches, else nil.
    func match(_ path: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                let rest = index < path.count ? path[index...].joined(separator: "/") : ""
                if !name.isEmpty { parameters[name] = PercentDecoding.decode(rest) }
                return parameters
            case .literal(let literal):
                guard index < path.count, PercentDecoding.decode(path[index]) == literal else { return nil }
            case .parameter(let name):
                guard index < path.count, !path[index].isEmpty else { return nil }
                parameters[name] = PercentDecoding.decode(path[index])
            }
        }
        return path.count == segments.count ? parameters : nil
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
