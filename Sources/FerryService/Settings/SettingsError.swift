/// Why a settings change was refused, in the domain's words; the API chooses the status (`SettingsController`).
enum SettingsError: Error, Equatable, CustomStringConvertible {
    /// The change could not be made durable; nothing was changed.
    case storeFailed(String)

    var description: String {
        switch self {
        case .storeFailed(let why): "the settings could not be saved: \(why)"
        }
    }
}
