import FerryStore
import Logging

/// The settings of the running service (`RuntimeSettings`): what `GET /api/v1/settings` answers and what `PATCH`
/// changes. An actor owns the current values, so changes are made one at a time, each stored before it is applied:
/// a change that was answered is kept across restarts, and one the store refused changes nothing.
actor LiveSettings {
    private(set) var current: RuntimeSettings
    private let store: any JobStore
    /// Hands new settings to whatever enforces them (the engine); called in the order of the changes.
    private let apply: @Sendable (RuntimeSettings) -> Void
    private let logger: Logger

    init(current: RuntimeSettings, store: any JobStore, logger: Logger,
         apply: @escaping @Sendable (RuntimeSettings) -> Void) {
        self.current = current
        self.store = store
        self.logger = logger
        self.apply = apply
    }

    /// The settings to start with: the configured values (`flags`) under what the store kept from earlier changes.
    /// Logs each configured value a kept one overrides, so an operator sees why a flag does not apply.
    /// - Throws: the store's error when the kept settings cannot be read.
    static func starting(flags: RuntimeSettings, store: any JobStore, logger: Logger) async throws -> RuntimeSettings {
        let settings = RuntimeSettings.starting(flags: flags, stored: try await store.settings())
        func text(_ rate: Int64?) -> String { rate.map(String.init) ?? "none" }
        if settings.maxBytesPerSecond != flags.maxBytesPerSecond {
            logger.notice("max-bytes-per-second: using \(text(settings.maxBytesPerSecond)), set through the API, instead of the configured \(text(flags.maxBytesPerSecond))")
        }
        if settings.maxConcurrent != flags.maxConcurrent {
            logger.notice("max-concurrent: using \(settings.maxConcurrent), set through the API, instead of the configured \(flags.maxConcurrent)")
        }
        return settings
    }

    /// Stores `change` (the fields it sets), then makes it the current settings and applies them.
    /// - Returns: the settings now in force.
    /// - Throws: `SettingsError.storeFailed`, having changed nothing.
    func change(_ change: StoredSettings) async throws(SettingsError) -> RuntimeSettings {
        guard !change.isEmpty else { return current }
        do { try await store.saveSettings(change) } catch { throw .storeFailed("\(error)") }
        let previous = current
        current = current.applying(change)
        if current != previous {
            apply(current)
            logger.info("settings changed", metadata: [
                "maxBytesPerSecond": "\(current.maxBytesPerSecond.map(String.init) ?? "none")",
                "maxConcurrent": "\(current.maxConcurrent)",
            ])
        }
        return current
    }
}
