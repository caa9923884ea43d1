/// A command line, parsed against its subcommand's grammar.
struct Invocation: Sendable, Equatable {
    var command: String
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    var wantsJSON: Bool { has("--json") }
    var wantsHelp: Bool { has("--help") }
}

/// A command line that does not fit the grammar: exit 2 with the subcommand's usage.
struct UsageError: Error, Equatable, CustomStringConvertible {
    var message: String
    var command: String?
    var description: String { message }
}

enum ArgumentParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var rest = arguments[...]
        var commandName = "list"
        if let first = rest.first, !first.hasPrefix("-") {
            commandName = first
            rest = rest.dropFirst()
        }
        guard let spec = Commands.spec(named: commandName) else {
            throw UsageError(message: "unknown command '\(commandName)'", command: nil)
        }
        var invocation = Invocation(command: spec.name)
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
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.option(named: name) else {
                throw UsageError(message: "unknown option '\(name)' for \(spec.name)", command: spec.name)
            }
            if option.takesValue {
                guard let value = inlineValue ?? rest.popFirst() else {
                    throw UsageError(message: "\(option.name) needs a value (\(option.valueName ?? "VALUE"))", command: spec.name)
                }
                if !option.repeatable, invocation.values[option.name] != nil {
                    throw UsageError(message: "\(option.name) given twice", command: spec.name)
                }
                invocation.values[option.name, default: []].append(value)
            } else {
                guard inlineValue == nil else {
                    throw UsageError(message: "\(option.name) takes no value", command: spec.name)
                }
                invocation.flags.insert(option.name)
            }
        }
        if invocation.wantsHelp { return invocation }
        if invocation.positionals.count > spec.positionals.count {
            throw UsageError(message: "unexpected argument '\(invocation.positionals[spec.positionals.count])'", command: spec.name)
        }
        if invocation.positionals.count < spec.requiredPositionals {
            throw UsageError(message: "missing \(spec.positionals[invocation.positionals.count].split(separator: " ").first ?? "argument")",
                             command: spec.name)
        }
        for name in spec.required where invocation.values[name] == nil {
            throw UsageError(message: "\(name) is required", command: spec.name)
        }
        return invocation
    }
}
