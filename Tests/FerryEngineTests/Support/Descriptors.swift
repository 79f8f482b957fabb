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

extension Descriptors {
    /// Inodes of this machine's TCP sockets whose remote port is `port` (from /proc/net/tcp and tcp6).
    /// Other tests in the same process open sockets of their own at the same time; a leak check
    /// narrowed to the sockets talking to one test's origin is not disturbed by them.
    static func socketInodes(remotePort port: Int) -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let colon = fields[2].lastIndex(of: ":"),
                      Int(fields[2][fields[2].index(after: colon)...], radix: 16) == port else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }
}

extension Descriptor {
    /// The inode of a socket descriptor (`socket:[123]` → `123`).
    var socketInode: String? {
        guard isSocket, let open = target.firstIndex(of: "["), let close = target.lastIndex(of: "]") else { return nil }
        return String(target[target.index(after: open)..<close])
    }
}
