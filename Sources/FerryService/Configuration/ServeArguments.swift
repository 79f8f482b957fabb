/// `ferry serve`'s command line read against `ServeOption.all`: `--name value` or `--name=value`, flags without a
/// value, repeatable options joined with commas (as their variables take them). Pure; the resolving of the values
/// (`ServiceConfiguration.resolve`) checks what they say.
public enum ServeArguments {
    /// An argument the options do not take, in words naming it.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// The values given, by setting (a flag given is `"1"`).
    public static func parse(_ arguments: [String]) throws(Problem) -> [ServiceConfiguration.Setting: String] {
        var values: [ServiceConfiguration.Setting: String] = [:]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw Problem(description: "unexpected argument '\(argument)': ferry serve takes only options (see ferry serve --help)")
            }
            let name: Substring, inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = argument[argument.index(argument.startIndex, offsetBy: 2)..<equals]
                inline = String(argument[argument.index(after: equals)...])
            } else {
                name = argument.dropFirst(2)
                inline = nil
            }
            guard let option = ServeOption.all.first(where: { $0.setting.rawValue == name }) else {
                throw Problem(description: "unknown option '--\(name)' (see ferry serve --help)")
            }
            if case .flag = option.form {
                guard inline == nil else { throw Problem(description: "\(option.flag) takes no value") }
                values[option.setting] = "1"
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.endIndex, !arguments[index].hasPrefix("--") else {
                    throw Problem(description: "\(option.flag) needs a value")
                }
                value = arguments[index]
                index += 1
            }
            if case .list = option.form, let earlier = values[option.setting] {
                values[option.setting] = earlier + "," + value
            } else {
                values[option.setting] = value
            }
        }
        return values
    }
}
