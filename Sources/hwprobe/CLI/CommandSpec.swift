import HAL

/// What an option's or argument's value is, so the shell completions, the man page and the
/// URI suggestions all know it from the command table instead of keeping their own lists.
enum ValueKind: Sendable, Equatable {
    /// A path; completions offer files.
    case file
    /// A device URI of one family; completions offer its schemes (and paths after path schemes).
    case deviceURI(DeviceURI.Family)
    /// One of a fixed set of words (completions offer them; for arguments the parser checks them).
    case choice([String])
    /// Anything else (numbers, addresses): completions offer nothing.
    case text
}

/// One option a subcommand accepts.
struct OptionSpec: Sendable {
    var name: String
    var alias: String?
    var valueName: String?
    var repeatable = false
    var help: String
    /// What the value is (only for options that take one).
    var value: ValueKind = .text

    var takesValue: Bool { valueName != nil }
    var spellings: [String] { [name] + (alias.map { [$0] } ?? []) }
}

/// One positional argument.
struct PositionalSpec: Sendable {
    var name: String
    var help: String
    /// `.choice` values are checked by the parser (with a did-you-mean); others are the command's to check.
    var value: ValueKind = .text
}

/// A real command line shown under `examples:` in `--help` and in the man page. Tests parse
/// every one against the table, so an example cannot drift away from the grammar.
struct Example: Sendable {
    /// Starts with `hwprobe`; may go on with a shell redirection or pipe.
    var line: String
    var what: String
}

/// A subcommand's grammar: its options and positional arguments, and the words `--help` prints.
struct CommandSpec: Sendable {
    var name: String
    var synopsis: String
    var summary: String
    var options: [OptionSpec]
    var positionals: [PositionalSpec] = []
    var requiredPositionals = 0
    var required: [String] = []
    var examples: [Example] = []

    /// Options every subcommand takes (docs/cli.md, "Global options"), before or after its name.
    static let global: [OptionSpec] = [
        OptionSpec(name: "--btsnoop", valueName: "FILE", help: "write all HCI traffic to FILE in btsnoop format", value: .file),
        OptionSpec(name: "--reduce-motion", help: "crossfades instead of motion, no show-only pauses"),
        OptionSpec(name: "--no-color", help: "no colours (also when NO_COLOR is set)"),
        OptionSpec(name: "--verbose", alias: "-v", help: "say more on stderr"),
        OptionSpec(name: "--help", alias: "-h", help: "show this help"),
        OptionSpec(name: "--version", help: "print hwprobe's version (and git commit) and exit"),
    ]

    static func isGlobal(_ spelling: String) -> Bool {
        global.contains { $0.spellings.contains(spelling) }
    }

    var allOptions: [OptionSpec] { options + Self.global }

    func option(named name: String) -> OptionSpec? {
        allOptions.first { $0.spellings.contains(name) }
    }

    var helpText: String {
        var lines = ["usage: \(synopsis)", "", summary, ""]
        if !positionals.isEmpty {
            lines.append("arguments:")
            for p in positionals { lines.append("  " + Self.column(p.name) + "  " + p.help) }
            lines.append("")
        }
        lines.append("options:")
        for option in allOptions {
            var left = option.name
            if let alias = option.alias { left = "\(alias), \(left)" }
            if let value = option.valueName { left += " \(value)" }
            lines.append("  " + Self.column(left) + "  " + option.help)
        }
        if !examples.isEmpty {
            lines += ["", "examples:"]
            for example in examples { lines += ["  " + example.line, "      " + example.what] }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func column(_ text: String) -> String {
        text.padding(toLength: max(text.count, 24), withPad: " ", startingAt: 0)
    }
}
