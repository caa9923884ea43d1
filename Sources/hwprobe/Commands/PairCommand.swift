import BLEProtocol
import Foundation
import HAL
import LinuxIO
import Transports

/// `hwprobe pair --hci URI ADDRESS [--io CAP] [--passkey N] [--legacy] [--json]`
/// (hwprobe-cli.md, third edition): pairs and bonds with one peripheral through our host's
/// Security Manager, keeps the bond in the controller's bond store, and prints the outcome —
/// never a key's value. A failed pairing exits 1 with its reason and stores nothing.
struct PairCommand: Sendable {
    var console: Console
    var transports: TransportFactory
    /// Who answers the prompts; nil: ``UnattendedPairing``.
    var person: (any PairingDelegate)?

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri = try DeviceURIArgument.parse(text, option: "--hci")
        guard let target = invocation.positionals.first else { throw CLIFailure(kind: .usage, message: "missing ADDRESS") }
        guard let address = BLEAddress(string: target) else {
            throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF, optionally with /public or /random")
        }
        let passkey = try PairingOptions.passkey(invocation.value("--passkey"))
        let terminal = PairingOptions.atTerminal(console: console, passkey: passkey)
        let io = try PairingOptions.ioCapability(invocation.value("--io"), passkey: passkey, terminal: terminal)
        let prompts = terminal ? TerminalPairing(console: console) : nil
        let central = try await transports.central(for: uri, snoopPath: invocation.value("--btsnoop"))
        let outcome: Result<Int32, CLIFailure>
        do throws(CLIFailure) {
            // A replay's pairing is simulated (docs/cassette-format.md): never kept in the bond store.
            let bonds: any BondKeeper = if case .replay = uri { RunBonds() } else {
                try await PairingOptions.bondStore(host: central.host, environment: console.environment)
            }
            let configuration = SecurityConfiguration(ioCapability: io,
                                                      requiresMITM: PairingOptions.requiresMITM(invocation.value("--io"), io: io, passkey: passkey),
                                                      secureConnections: invocation.has("--legacy") ? .legacyOnly : .preferred)
            await central.host.useSecurity(HostSecurity(configuration: configuration, bonds: bonds,
                                                        delegate: person ?? prompts ?? UnattendedPairing(passkey: passkey, console: console)))
            outcome = .success(try await pair(address, central: central, json: invocation.wantsJSON))
        } catch {
            outcome = .failure(error)
        }
        prompts?.dismiss()
        await central.close()
        return try outcome.get()
    }

    private func pair(_ address: BLEAddress, central: BLECentral, json: Bool) async throws(CLIFailure) -> Int32 {
        let connection: BLEConnection
        do { connection = try await central.connect(address) } catch { throw CLIFailure(error) }
        let result: SecuringOutcome
        do { result = try await central.host.secure(connection, pair: true) } catch {
            await connection.disconnect()
            throw CLIFailure(error)
        }
        await connection.disconnect()
        switch result {
        case .paired(let paired):
            let identity = paired.peerIdentity ?? paired.bond?.identity ?? address
            if json {
                console.out(Self.json(address: address, identity: identity, paired: paired))
            } else {
                console.out("paired with \(address) (identity \(identity)): \(paired.method), \(paired.security)"
                            + (paired.bond == nil ? ", not bonded" : ", bonded: " + paired.keyNames.joined(separator: ", ")) + "\n")
            }
            return ExitCode.success
        case .notStored(_, let why):
            throw CLIFailure(kind: .device, message: "paired with \(address), but the bond could not be stored: \(why)")
        case .failed(let failure):
            // Cancelled at the prompt with Ctrl-C: the interrupt's exit code (130).
            throw CLIFailure(kind: .incomplete, message: failure.description,
                             exitOverride: SignalHandling.shared.interruption.map(SignalHandling.exitCode(for:)))
        case .encrypted, .bondRejected:
            throw CLIFailure(kind: .incomplete, message: "\(address) was not paired")
        }
    }

    /// `{"address", "identity", "method", "secureConnections", "bonded", "keys"}`: never key values.
    static func json(address: BLEAddress, identity: BLEAddress, paired: PairingOutcome) -> String {
        struct Line: Encodable {
            var address: String
            var identity: String
            var method: String
            var secureConnections: Bool
            var bonded: Bool
            var keys: [String]
        }
        let line = Line(address: address.description, identity: identity.description, method: paired.method.description,
                        secureConnections: paired.security.isSecureConnections, bonded: paired.bond != nil, keys: paired.keyNames)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(line) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// What `pair` and `serve --pairing` share: `--io`, `--passkey`, and the controller's bond store.
enum PairingOptions {
    /// `--io`: display, display-yes-no, keyboard, keyboard-display, none. Without it:
    /// keyboard-display at a terminal (`terminal`: the prompts reach a person) or when `--passkey`
    /// gives a passkey to type or show, none otherwise (hwprobe-cli.md, third edition).
    static func ioCapability(_ text: String?, passkey: UInt32?, terminal: Bool = false) throws(CLIFailure) -> IOCapability {
        switch text {
        case nil: return passkey == nil && !terminal ? .noInputNoOutput : .keyboardDisplay
        case "display": return .displayOnly
        case "display-yes-no": return .displayYesNo
        case "keyboard": return .keyboardOnly
        case "keyboard-display": return .keyboardDisplay
        case "none": return .noInputNoOutput
        case let other?:
            throw CLIFailure(kind: .usage, message: "--io \(other): use display, display-yes-no, keyboard, keyboard-display or none")
        }
    }

    /// Whether this side insists on MITM protection (refusing Just Works): when the person chose
    /// an IO capability or gave a passkey, not when keyboard-display is only the terminal's
    /// default — a device that asks for nothing is then still paired with Just Works.
    static func requiresMITM(_ text: String?, io: IOCapability, passkey: UInt32?) -> Bool {
        guard text != nil || passkey != nil else { return false }
        return io != .noInputNoOutput
    }

    /// Whether the prompts reach a person: stdin and stderr are terminals, and no `--passkey`
    /// answers for them.
    static func atTerminal(console: Console, passkey: UInt32?) -> Bool {
        passkey == nil && console.errIsTerminal && FileDescriptor.standardInput.isTerminal
    }

    /// `--passkey N`: 000000–999999.
    static func passkey(_ text: String?) throws(CLIFailure) -> UInt32? {
        guard let text else { return nil }
        guard text.count <= 6, let value = UInt32(text), value <= 999_999 else {
            throw CLIFailure(kind: .usage, message: "--passkey must be six digits, 000000 to 999999")
        }
        return value
    }

    /// The bond store of the controller `host` opened, with our own identity (IRK) made and kept
    /// in it the first time (issue 29: one IRK per controller identity, so a central that bonded
    /// with us recognises our private addresses across runs).
    static func bondStoreWithOwnIdentity(host: HCIHost, environment: [String: String]) async throws(CLIFailure) -> (StoredBonds, LocalIdentity) {
        guard let controller = await host.localAddress else {
            throw CLIFailure(kind: .unsupported, message: "the controller has no public address to keep bonds under")
        }
        var random = SecurityRandom.system
        do {
            let path = try BondStore.defaultPath(controller: controller, environment: environment)
            var existing = try BondStore.load(controller: controller, path: path)
            if existing.localIdentity == nil {
                existing = try BondStore.update(controller: controller, path: path) { _ = $0.ensureLocalIdentity(address: controller, random: &random) }
            }
            guard let identity = existing.localIdentity else { throw BondStoreError.damaged(.bonds, path: path, reason: "it keeps no identity") }
            return (StoredBonds(existing), identity)
        } catch {
            throw CLIFailure(kind: .permission, message: "\(error)")
        }
    }

    /// The bond store of the controller `host` opened, read now.
    static func bondStore(host: HCIHost, environment: [String: String]) async throws(CLIFailure) -> StoredBonds {
        guard let controller = await host.localAddress else {
            throw CLIFailure(kind: .unsupported, message: "the controller has no public address to keep bonds under")
        }
        do {
            let path = try BondStore.defaultPath(controller: controller, environment: environment)
            return StoredBonds(try BondStore.load(controller: controller, path: path))
        } catch {
            throw CLIFailure(kind: .permission, message: "\(error)")
        }
    }
}

/// The prompts without a person: `--passkey` is typed or shown, a passkey to show is printed on
/// standard error, numeric comparison is refused (the contract's unattended rule).
struct UnattendedPairing: PairingDelegate {
    var passkey: UInt32?
    var console: Console

    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {
        console.err("hwprobe: passkey for \(peer): \(Self.digits(passkey))\n")
    }

    func passkey(for peer: BLEAddress) async -> UInt32? {
        if passkey == nil { console.err("hwprobe: \(peer) asks for a passkey: give it with --passkey N\n") }
        return passkey
    }

    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool {
        console.err("hwprobe: \(peer) asks to compare \(Self.digits(value)); numeric comparison is refused without a person (use --io none or --passkey)\n")
        return false
    }

    static func digits(_ value: UInt32) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }
}
