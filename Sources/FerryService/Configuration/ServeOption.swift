/// One option of `ferry serve`: its setting (flag and environment variable), the value it takes, its default and what
/// it does. `ServeOption.all` is the one description of the options: the command line's parser (`ServeArguments`) and
/// `--help`, the environment (`ServiceConfiguration.resolve`) and the tables of README.md and docs/API.md are made from
/// it (a test keeps the documents in step). Pure values.
public struct ServeOption: Sendable {
    /// What the option takes on the command line.
    public enum Form: Sendable, Equatable {
        /// `--port 8080` or `--port=8080`; given twice, the last wins.
        case value(String)
        /// `--allow-private-networks` (its variable takes `1` or `0`).
        case flag
        /// Repeatable, its values joined with commas; the variable takes a comma list.
        case list(String)
    }

    /// The default, as the documents show it.
    public enum Default: Sendable, Equatable {
        case none
        /// A literal value, e.g. `8080`.
        case value(String)
        /// What happens without it, in words.
        case described(String)
    }

    public let setting: ServiceConfiguration.Setting
    public let form: Form
    public let defaultValue: Default
    /// One or two sentences, plain text: `--help` and the README's table.
    public let summary: String
    /// docs/API.md's cell: the default and everything a user needs to know (Markdown).
    public let details: String

    init(_ setting: ServiceConfiguration.Setting, _ form: Form, default defaultValue: Default, summary: String,
         details: String) {
        self.setting = setting
        self.form = form
        self.defaultValue = defaultValue
        self.summary = summary
        self.details = details
    }

    public var flag: String { "--" + setting.rawValue }

    /// The option of a setting.
    public static func of(_ setting: ServiceConfiguration.Setting) -> ServeOption {
        guard let option = all.first(where: { $0.setting == setting }) else {
            preconditionFailure("ServeOption.all lacks \(setting)")  // ServeOptionTests checks every setting has one
        }
        return option
    }

    // MARK: Rendering

    /// `--help`'s text for the options: each flag with its value, what it does, its variable and default.
    public static var helpText: String {
        var lines = ["SETTINGS:"]
        for option in all {
            let usage = switch option.form {
            case .value(let name): "\(option.flag) <\(name.lowercased())>"
            case .list(let name): "\(option.flag) <\(name.lowercased())> (repeatable)"
            case .flag: option.flag
            }
            lines.append("  " + usage)
            lines += wrapped(option.summary + " " + option.environmentNote, width: 68).map { "        " + $0 }
        }
        lines.append("  -h, --help")
        lines.append("        Show help information.")
        return lines.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` characters, broken at spaces (a longer word stands alone); the help printer
    /// would otherwise wrap the lines itself and lose their indentation.
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// `(FERRY_PORT; default 8080)`.
    var environmentNote: String {
        let variable = switch form {
        case .flag: setting.environmentName + "=1"
        case .list: setting.environmentName + ", a comma list"
        case .value: setting.environmentName
        }
        return switch defaultValue {
        case .none: "(\(variable))"
        case .value(let value): "(\(variable); default \(value))"
        case .described(let words): "(\(variable); default: \(words))"
        }
    }

    /// README.md's table of the options (between its `serve-options` markers).
    public static var readmeTable: String {
        var rows = ["| flag | variable | default | what it does |", "|---|---|---|---|"]
        for option in all {
            let flag = switch option.form {
            case .value: "`\(option.flag)`"
            case .list(let name): "`\(option.flag) \(name)` (repeatable)"
            case .flag: "`\(option.flag)`"
            }
            let variable = switch option.form {
            case .flag: "`\(option.setting.environmentName)=1`"
            case .list: "`\(option.setting.environmentName)` (a comma list)"
            case .value: "`\(option.setting.environmentName)`"
            }
            let shown = switch option.defaultValue {
            case .none: "none"
            case .value(let value): "`\(value)`"
            case .described(let words): words
            }
            rows.append("| \(flag) | \(variable) | \(shown) | \(option.summary) |")
        }
        return rows.joined(separator: "\n")
    }

    /// docs/API.md's table of the options (between its `serve-options` markers).
    public static var referenceTable: String {
        var rows = ["| flag | variable | default |", "|---|---|---|"]
        for option in all {
            let variable = option.form == .flag ? option.setting.environmentName + "=1" : option.setting.environmentName
            rows.append("| `\(option.flag)` | `\(variable)` | \(option.details) |")
        }
        return rows.joined(separator: "\n")
    }
}
