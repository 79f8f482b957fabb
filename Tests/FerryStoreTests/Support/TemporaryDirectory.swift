import Foundation

/// A fresh directory under the system temporary directory; `remove()` deletes it and everything in it.
struct TemporaryDirectory {
    let path: String

    init(prefix: String) throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
