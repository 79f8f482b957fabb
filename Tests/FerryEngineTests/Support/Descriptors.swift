import Foundation

/// The process's open descriptors, from /proc/self/fd.
struct Descriptor: Hashable, CustomStringConvertible {
    let number: Int32
    let target: String
    var isSocket: Bool { target.hasPrefix("socket:") }
    var description: String { "\(number) -> \(target)" }
}

enum Descriptors {
    static func snapshot() -> Set<Descriptor> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var result: Set<Descriptor> = []
        for name in names {
            guard let number = Int32(name) else { continue }
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?"
            result.insert(Descriptor(number: number, target: target))
        }
        return result
    }
}
