import HAL

/// What the three shells' completion scripts are made from: the command table, read once the
/// way a shell needs it. Nothing here is a list of its own: options, which of them take values,
/// value kinds, argument choices and URI schemes all come from `Commands` and `DeviceURIArgument`.
enum CompletionModel {
    static var commands: [CommandSpec] { Commands.all }
    static var globals: [OptionSpec] { CommandSpec.global }

    /// How a shell should complete an option's value.
    static func valueKind(_ option: OptionSpec) -> ValueKind? {
        option.takesValue ? option.value : nil
    }

    /// The families a URI option of any command may take, in table order.
    static var families: [DeviceURI.Family] {
        var seen: [DeviceURI.Family] = []
        for option in commands.flatMap(\.allOptions) {
            if case .deviceURI(let family) = option.value, !seen.contains(family) { seen.append(family) }
        }
        return seen
    }

    static func schemes(_ family: DeviceURI.Family) -> [DeviceURIArgument.Form] { DeviceURIArgument.forms(family) }

    /// The schemes a file path follows (`uart:`, `v4l2:`, …), each once.
    static var pathSchemes: [String] {
        var seen = Set<String>()
        return families.flatMap { schemes($0) }.filter(\.takesPath).map(\.scheme).filter { seen.insert($0).inserted }
    }

    /// The first positional's fixed words, if it has any (`help COMMAND`, `completions SHELL`).
    static func positionalChoices(_ spec: CommandSpec) -> [String]? {
        guard let first = spec.positionals.first, case .choice(let words) = first.value else { return nil }
        return words
    }

    /// A word safe to write unquoted in every shell script (option names, choices, schemes).
    static func isPlainWord(_ word: String) -> Bool {
        !word.isEmpty && word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_:.".contains($0)) }
    }
}

extension DeviceURI.Family {
    /// The name the scripts use for a family's helper function.
    var scriptName: String { rawValue }
}
