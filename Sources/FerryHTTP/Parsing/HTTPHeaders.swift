/// Ordered header fields with case-insensitive names. Duplicates are kept in order.
///
/// A value type; no owner needed.
public struct HTTPHeaders: Sequence, Sendable, ExpressibleByDictionaryLiteral, Equatable, CustomStringConvertible {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init() { fields = [] }
    public init(_ fields: [(String, String)]) { self.fields = fields.map { (name: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { ASCII.equalsIgnoringCase($0.name, name) }?.value }
        set {
            guard let newValue else { remove(name); return }
            if let index = fields.firstIndex(where: { ASCII.equalsIgnoringCase($0.name, name) }) {
                fields[index].value = newValue
                var i = index + 1
                while i < fields.count {
                    if ASCII.equalsIgnoringCase(fields[i].name, name) { fields.remove(at: i) } else { i += 1 }
                }
            } else {
                fields.append((name: name, value: newValue))
            }
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { ASCII.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// The comma-separated list elements of every `name` field, trimmed, empty ones dropped.
    public func listValues(_ name: String) -> [String] {
        values(name).flatMap { ASCII.listElements($0).map(String.init) }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }
    public mutating func remove(_ name: String) { fields.removeAll { ASCII.equalsIgnoringCase($0.name, name) } }
    public func contains(_ name: String) -> Bool { fields.contains { ASCII.equalsIgnoringCase($0.name, name) } }

    public func makeIterator() -> IndexingIterator<[Element]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { ASCII.equalsIgnoringCase($0.name, $1.name) && $0.value == $1.value }
    }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}
