/// A command line, parsed against its subcommand's grammar.
struct Invocation: Sendable, Equatable {
    var command: String
    /// False when no subcommand was typed and `list` was taken (`hwprobe`, `hwprobe -v`, `hwprobe --json`).
    var commandGiven = true
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    /// Every option value in the order it was typed, across options: where the order of two
    /// options means something (`gatt`'s `--write` and `--write-command` happen as given).
    var sequence: [OptionValue] = []

    struct OptionValue: Sendable, Equatable {
        var option: String
        var value: String
    }

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// The values of `options`, interleaved as typed.
    func inOrder(_ options: Set<String>) -> [OptionValue] { sequence.filter { options.contains($0.option) } }

    /// Two command lines that differ only in where options stand are the same invocation
    /// (`hwprobe -v scan` and `hwprobe scan -v`); `sequence` is there for the commands that read
    /// an order out of it, and each option's own values keep theirs in `values`.
    static func == (lhs: Invocation, rhs: Invocation) -> Bool {
        lhs.command == rhs.command && lhs.commandGiven == rhs.commandGiven && lhs.values == rhs.values
            && lhs.flags == rhs.flags && lhs.positionals == rhs.positionals
    }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    var wantsJSON: Bool { has("--json") }
    var wantsHelp: Bool { has("--help") }
    var wantsVersion: Bool { has("--version") }
}

/// A command line that does not fit the grammar: exit 2 with the subcommand's usage.
struct UsageError: Error, Equatable, CustomStringConvertible {
    var message: String
    var command: String?
    var description: String { message }
}

enum ArgumentParser {
    /// The default when no subcommand is typed (docs/cli.md: `hwprobe [list]`).
    static let defaultCommand = "list"

    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        // `hwprobe --man` is `hwprobe help --man`, as `hwprobe --help` is `hwprobe help`.
        if arguments.first == "--man" { return try parse(["help"] + arguments) }
        // Global options may come before the subcommand; they are parsed with the rest once
        // the subcommand is known, so "given twice" and "needs a value" work the same on both sides.
        var rest = arguments[...]
        var leading: [String] = []
        while let first = rest.first, first.hasPrefix("-"), first != "-", first != "--",
              let option = CommandSpec.global.first(where: { $0.spellings.contains(Self.name(of: first)) }) {
            leading.append(first)
            rest = rest.dropFirst()
            if option.takesValue, !first.contains("="), let value = rest.first {
                leading.append(value)
                rest = rest.dropFirst()
            }
        }
        var commandName = defaultCommand
        var commandGiven = false
        if let first = rest.first, !first.hasPrefix("-") {
            guard Commands.spec(named: first) != nil else {
                throw UsageError(message: "unknown command '\(first)'" + Self.hint(DidYouMean.suggestion(for: first, among: Commands.all.map(\.name))),
                                 command: nil)
            }
            commandName = first
            commandGiven = true
            rest = rest.dropFirst()
        }
        guard let spec = Commands.spec(named: commandName) else {
            throw UsageError(message: "unknown command '\(commandName)'", command: nil)
        }
        var invocation = Invocation(command: spec.name, commandGiven: commandGiven)
        try parseOptions(leading + rest, of: spec, into: &invocation)
        if invocation.wantsHelp || invocation.wantsVersion { return invocation }
        try check(invocation, against: spec)
        return invocation
    }

    private static func parseOptions(_ arguments: [String], of spec: CommandSpec, into invocation: inout Invocation) throws(UsageError) {
        var rest = arguments[...]
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                invocation.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            let name = Self.name(of: argument)
            let inlineValue: String? = name == argument ? nil : String(argument.dropFirst(name.count + 1))
            guard let option = spec.option(named: name) else {
                throw UsageError(message: unknownOption(name, in: spec), command: spec.name)
            }
            if option.takesValue {
                guard let value = inlineValue ?? rest.popFirst() else {
                    throw UsageError(message: "\(option.name) needs a value (\(option.valueName ?? "VALUE"))", command: spec.name)
                }
                if !option.repeatable, invocation.values[option.name] != nil {
                    throw UsageError(message: "\(option.name) given twice", command: spec.name)
                }
                invocation.values[option.name, default: []].append(value)
                invocation.sequence.append(.init(option: option.name, value: value))
            } else {
                guard inlineValue == nil else {
                    throw UsageError(message: "\(option.name) takes no value", command: spec.name)
                }
                invocation.flags.insert(option.name)
            }
        }
    }

    /// The commands that open no Bluetooth controller, so a `--btsnoop` given to them would
    /// silently capture nothing.
    static let withoutController: Set<String> = ["import", "haptics", "help", "completions"]

    private static func check(_ invocation: Invocation, against spec: CommandSpec) throws(UsageError) {
        if invocation.value("--btsnoop") != nil, withoutController.contains(spec.name) {
            throw UsageError(message: "--btsnoop captures a Bluetooth controller's traffic, and \(spec.name) opens none: leave it out",
                             command: spec.name)
        }
        if invocation.positionals.count > spec.positionals.count {
            let extra = invocation.positionals[spec.positionals.count]
            if !invocation.commandGiven, Commands.spec(named: extra) != nil {
                // `hwprobe --json scan …`: only global options may stand before the command.
                throw UsageError(message: "unexpected argument '\(extra)': put the command first (hwprobe \(extra) …); "
                                 + "only global options may come before it", command: nil)
            }
            throw UsageError(message: "unexpected argument '\(extra)'", command: spec.name)
        }
        if invocation.positionals.count < spec.requiredPositionals {
            throw UsageError(message: "missing \(spec.positionals[invocation.positionals.count].name)", command: spec.name)
        }
        for (value, positional) in zip(invocation.positionals, spec.positionals) {
            guard case .choice(let choices) = positional.value, !choices.contains(value) else { continue }
            let message = "unknown \(positional.name.lowercased()) '\(value)'"
            if let near = DidYouMean.suggestion(for: value, among: choices) {
                throw UsageError(message: message + hint(near), command: spec.name)
            }
            throw UsageError(message: message + " (use one of " + choices.joined(separator: ", ") + ")", command: spec.name)
        }
        for name in spec.required where invocation.values[name] == nil {
            throw UsageError(message: "\(name) is required", command: spec.name)
        }
    }

    /// `--hci=sim:` names `--hci`; short options and bare words name themselves.
    private static func name(of argument: String) -> String {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return argument }
        return String(argument[..<equals])
    }

    /// What the person probably meant: a near spelling in this command's grammar (global options
    /// included), else the commands that do take this option.
    static func unknownOption(_ name: String, in spec: CommandSpec) -> String {
        let message = "unknown option '\(name)' for \(spec.name)"
        if let near = DidYouMean.suggestion(for: name, among: spec.allOptions.flatMap(\.spellings)) {
            return message + hint(near)
        }
        let owners = Commands.all.filter { $0.options.contains { $0.spellings.contains(name) } }.map(\.name)
        guard !owners.isEmpty else { return message }
        return message + " (it is an option of " + owners.joined(separator: ", ") + ")"
    }

    static func hint(_ suggestion: String?) -> String {
        suggestion.map { " (did you mean \($0)?)" } ?? ""
    }
}
