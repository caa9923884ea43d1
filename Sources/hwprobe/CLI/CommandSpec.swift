/// One option a subcommand accepts.
struct OptionSpec: Sendable {
    var name: String
    var alias: String?
    var valueName: String?
    var repeatable = false
    var help: String

    var takesValue: Bool { valueName != nil }
}

/// A subcommand's grammar: its options and positional arguments, and the words `--help` prints.
struct CommandSpec: Sendable {
    var name: String
    var synopsis: String
    var summary: String
    var options: [OptionSpec]
    var positionals: [String] = []
    var requiredPositionals = 0
    var required: [String] = []

    /// Options every subcommand takes (hwprobe-cli.md, "Global options").
    static let global: [OptionSpec] = [
        OptionSpec(name: "--btsnoop", valueName: "FILE", help: "write all HCI traffic to FILE in btsnoop format"),
        OptionSpec(name: "--reduce-motion", help: "crossfades instead of motion, no show-only pauses"),
        OptionSpec(name: "--no-color", help: "no colours (also when NO_COLOR is set)"),
        OptionSpec(name: "--verbose", alias: "-v", help: "say more on stderr"),
        OptionSpec(name: "--help", alias: "-h", help: "show this help"),
    ]

    var allOptions: [OptionSpec] { options + Self.global }

    func option(named name: String) -> OptionSpec? {
        allOptions.first { $0.name == name || $0.alias == name }
    }

    var helpText: String {
        var lines = ["usage: \(synopsis)", "", summary, ""]
        if !positionals.isEmpty {
            lines.append("arguments:")
            for p in positionals { lines.append("  \(p)") }
            lines.append("")
        }
        lines.append("options:")
        for option in allOptions {
            var left = option.name
            if let alias = option.alias { left = "\(alias), \(left)" }
            if let value = option.valueName { left += " \(value)" }
            lines.append("  " + left.padding(toLength: max(left.count, 24), withPad: " ", startingAt: 0) + "  " + option.help)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
