import Logging

/// A `LogHandler` writing `StreamLogHandler`'s line format through a `BatchedLog`:
/// `<time> <level> <label>: <metadata> [<source>] <message>`.
/// A value; safe from any thread (the log it writes to has its own locks).
public struct BatchedLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let log: BatchedLog

    public init(label: String, log: BatchedLog = .standardError) {
        self.label = label
        self.log = log
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let text = Self.format(level: event.level, label: label, metadata: merged, source: event.source,
                               message: event.message.description)
        log.append(text, urgent: event.level >= .notice)
    }

    /// The line after the timestamp, as `StreamLogHandler` writes it (metadata sorted by key).
    static func format(level: Logger.Level, label: String, metadata: Logger.Metadata, source: String,
                       message: String) -> String {
        var text = " \(level)"
        if !label.isEmpty { text += " " + label }
        text += ":"
        if !metadata.isEmpty {
            for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        }
        text += " [\(source)] " + message
        return text
    }

}
