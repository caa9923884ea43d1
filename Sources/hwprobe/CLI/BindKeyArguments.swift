import HAL
import Transports

/// `--bind-key KEY` (repeatable) and `--save-key` on `weigh`, `list` and `watch` (docs/cli.md,
/// "Bind keys"): the keys that read scales which encrypt their advertisements (Xiaomi's S400),
/// and the kept ones from the bind key store.
///
/// `KEY` is 32 hex digits, for whichever scale needs a key, or `ADDRESS=HEX`, for the scale at
/// that address. The key is a secret: it goes straight into a ``BindKey`` (never printed, wiped
/// when dropped); a message about a malformed one never repeats it; a `--report` file's command
/// line shows it as `…` (``redacted(_:)``). The argument's own text is the process's and cannot
/// be wiped (and `ps` shows a command line to everyone on the machine: keep a key once with
/// `--save-key`, and leave it off after that).
enum BindKeyArguments {
    /// The commands that take `--bind-key`.
    static let commands: Set<String> = ["weigh", "list", "watch"]
    static let option = "--bind-key"
    static let save = "--save-key"

    /// The keys typed, then those kept in the store (a store that cannot be read is said through
    /// `warn` and left out: the typed keys still work). No store is read without a place for it
    /// (no HOME) or when the command scans no controller.
    static func keys(for invocation: Invocation, environment: [String: String], warn: (String) -> Void) throws(CLIFailure) -> BindKeys {
        var keys = try typed(invocation)
        if invocation.has(save), invocation.all(option).isEmpty {
            throw CLIFailure(kind: .usage, message: "\(save) keeps the key given with \(option): give it too (\(option) ADDRESS=HEX, or 32 hex digits)")
        }
        guard !invocation.all("--hci").isEmpty, let path = try? BindKeyStore.defaultPath(environment: environment) else { return keys }
        do {
            let store = try BindKeyStore.load(path: path)
            if !store.keys.isEmpty { keys.addStored(store.keys, from: path) }
        } catch {
            warn("hwprobe: the kept bind keys were not read (\(error)); only keys given with \(option) are used")
        }
        return keys
    }

    /// What was typed after each `--bind-key`, checked: at most one key without an address, one
    /// key per address. Messages say what is wrong with a key, never what it was.
    static func typed(_ invocation: Invocation) throws(CLIFailure) -> BindKeys {
        var keys = BindKeys()
        var scoped: [BLEAddress] = []
        for value in invocation.all(option) {
            let addressText: Substring?
            let hex: Substring
            if let equals = value.firstIndex(of: "=") {
                addressText = value[..<equals]
                hex = value[value.index(after: equals)...]
            } else {
                addressText = nil
                hex = value[...]
            }
            // The address first: words about a key may then name it (a key typed the wrong way
            // round must not be repeated as an address).
            var address: BLEAddress?
            if let addressText {
                guard let parsed = BLEAddress(string: String(addressText)) else {
                    throw CLIFailure(kind: .usage, message: "\(option) ADDRESS=HEX: the part before '=' must be an address like AA:BB:CC:DD:EE:FF")
                }
                address = parsed
            }
            guard let key = BindKey.parse(hex: hex) else {
                throw CLIFailure(kind: .usage, message: "\(option): a bind key is 32 hex digits (16 bytes), not the \(hex.count) characters given"
                                 + (address.map { " for \($0)" } ?? "") + "; e.g. \(option) D4:12:3A:00:18:1D=0123456789abcdef0123456789abcdef")
            }
            if let address {
                guard !scoped.contains(where: { $0.bytes == address.bytes }) else {
                    throw CLIFailure(kind: .usage, message: "\(option) given twice for \(address): give each scale one key")
                }
                scoped.append(address)
                keys.set(key, for: address)
            } else {
                guard keys.anyDevice == nil else {
                    throw CLIFailure(kind: .usage, message: "\(option) without an address given twice: give the other scales' keys as \(option) ADDRESS=HEX")
                }
                keys.setForAnyDevice(key)
            }
        }
        return keys
    }

    /// The command line with every bind key replaced by `…` (an address before it kept), for
    /// the files a run writes about itself (`--report`).
    static func redacted(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var hideNext = false
        for argument in arguments {
            if hideNext {
                out.append(hidden(argument))
                hideNext = false
            } else if argument == option {
                out.append(argument)
                hideNext = true
            } else if argument.hasPrefix(option + "=") {
                out.append(option + "=" + hidden(String(argument.dropFirst(option.count + 1))))
            } else {
                out.append(argument)
            }
        }
        return out
    }

    /// `ADDRESS=…` or `…`.
    private static func hidden(_ value: String) -> String {
        guard let equals = value.firstIndex(of: "=") else { return "…" }
        return String(value[..<equals]) + "=…"
    }
}
