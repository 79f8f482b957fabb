import Foundation
import Logging

/// The messages a service under test logged (`RunningFerry.start(logs:)`), kept in memory, for tests that check
/// what happened inside (a part copied in the object store, say). Any thread.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    /// Every message so far: "level message key=value …", metadata sorted by key.
    var messages: [String] { lock.withLock { lines } }

    fileprivate func append(_ line: String) { lock.withLock { lines.append(line) } }

    /// A handler adding to this capture, from `level` up.
    func handler(level: Logger.Level) -> any LogHandler { Handler(capture: self, logLevel: level) }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        init(capture: LogCapture, logLevel: Logger.Level) {
            self.capture = capture
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.append("\(event.level) \(event.message) \(fields)")
        }
    }
}
