import Foundation

/// Finds an executable: the given candidate paths first, then each directory of `PATH`.
enum ExecutableSearch {
    static func find(_ name: String, candidates: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let directories = path.split(separator: ":").map { "\($0)/\(name)" }
        return (candidates + directories).first { access($0, X_OK) == 0 }
    }
}
