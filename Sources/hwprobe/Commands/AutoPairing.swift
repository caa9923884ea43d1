import BLEProtocol
import Foundation
import HAL
import Transports

/// Pairing in the commands that talk to a device (`gatt`, `weigh`, `scan`, `check`;
/// hwprobe-cli.md, third edition): the host encrypts a bonded device with its stored key as it
/// connects, pairs when the device refuses a request with 0x05, 0x0C or 0x0F and repeats the
/// request, and with `--pair` pairs before anything else. The work is the host's
/// (``CentralSecurityPolicy``); this only turns the options into it and says what happened.
struct AutoPairing: Sendable {
    /// The commands that take `--pair`, `--io` and `--passkey`.
    static let commands: Set<String> = ["gatt", "weigh", "scan", "check"]

    var pairFirst: Bool
    var io: IOCapability
    var passkey: UInt32?
    /// Whether the person asked for pairing (`--pair`, `--io`, `--passkey`): then a controller
    /// that cannot keep bonds is an error rather than a reason to go on without pairing.
    var asked: Bool
    var requiresMITM: Bool
    var json: Bool
    var console: Console
    /// The prompts at a terminal; nil: unattended (`--passkey`, no terminal, or `scan`, whose
    /// drawn flow owns the terminal).
    var prompts: TerminalPairing?

    /// The options of `invocation`; nil for a command that does not pair.
    init?(_ invocation: Invocation, console: Console) throws(CLIFailure) {
        guard Self.commands.contains(invocation.command) else { return nil }
        pairFirst = invocation.has("--pair")
        passkey = try PairingOptions.passkey(invocation.value("--passkey"))
        let terminal = invocation.command != "scan" && PairingOptions.atTerminal(console: console, passkey: passkey)
        io = try PairingOptions.ioCapability(invocation.value("--io"), passkey: passkey, terminal: terminal)
        requiresMITM = PairingOptions.requiresMITM(invocation.value("--io"), io: io, passkey: passkey)
        asked = pairFirst || invocation.value("--io") != nil || passkey != nil
        json = invocation.wantsJSON
        self.console = console
        prompts = terminal ? TerminalPairing(console: console) : nil
    }

    /// The command is over: a prompt still open is cancelled and the terminal put back.
    func dismissPrompts() {
        prompts?.dismiss()
    }

    /// Gives the host of a controller just opened the bond store and the policy. Without `asked`,
    /// a controller with no bond store (no public address, a store that cannot be read) goes on
    /// without pairing, as before pairing existed.
    func install(on host: HCIHost) async throws(CLIFailure) {
        let bonds: StoredBonds
        do throws(CLIFailure) {
            bonds = try await PairingOptions.bondStore(host: host, environment: console.environment)
        } catch {
            guard asked else { return }
            throw error
        }
        await use(bonds, on: host)
    }

    /// A cassette's replay pairs as the recording says (docs/cassette-format.md): a simulated
    /// pairing, whose bond is kept for this run only, never in the bond store.
    func installForReplay(on host: HCIHost) async {
        await use(RunBonds(), on: host)
    }

    private func use(_ bonds: any BondKeeper, on host: HCIHost) async {
        let configuration = SecurityConfiguration(ioCapability: io, requiresMITM: requiresMITM)
        let delegate = ReportingPairing(prompts: prompts ?? UnattendedPairing(passkey: passkey, console: console), json: json, console: console)
        await host.useSecurity(HostSecurity(configuration: configuration, bonds: bonds, delegate: delegate,
                                            central: .automatic(pairFirst: pairFirst)))
    }

    /// `--pair`, `--io` and `--passkey` name a controller that cannot pair: the simulated bench
    /// has no Security Manager on the other side.
    func refuse(_ uri: DeviceURI) throws(CLIFailure) {
        guard asked else { return }
        throw CLIFailure(kind: .usage, message: "\(uri) does not pair: --pair, --io and --passkey need a controller (hci:N, uart:…, tcp:HOST:PORT)")
    }
}

/// Says on stderr how a pairing the command did on its own ended — with `--json` as the JSON
/// object `pair` prints (`"event": "paired"`, never a key's value), so that standard output
/// keeps the command's own result — and passes the prompts on.
struct ReportingPairing: PairingDelegate {
    var prompts: any PairingDelegate
    var json: Bool
    var console: Console

    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async { await prompts.displayPasskey(passkey, peer: peer) }
    func passkey(for peer: BLEAddress) async -> UInt32? { await prompts.passkey(for: peer) }
    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool { await prompts.confirm(value, peer: peer) }
    func compare(_ value: UInt32, peer: BLEAddress) async -> Bool? { await prompts.compare(value, peer: peer) }

    func secured(_ outcome: SecuringOutcome, peer: BLEAddress) async {
        if let line = Self.line(outcome, peer: peer, json: json) { console.diagnostic(line) }
    }

    /// The line for `outcome`; nil for what needs no word (a failure is the command's error).
    static func line(_ outcome: SecuringOutcome, peer: BLEAddress, json: Bool) -> String? {
        switch outcome {
        case .paired(let paired), .notStored(let paired, _):
            let identity = paired.peerIdentity ?? paired.bond?.identity ?? peer
            var note: String?
            if case .notStored(_, let why) = outcome { note = why }
            if json {
                return Event(event: "paired", address: peer.description, identity: identity.description, method: paired.method.description,
                             secureConnections: paired.security.isSecureConnections, bonded: paired.bond != nil && note == nil,
                             keys: paired.keyNames, note: note).encoded
            }
            return "hwprobe: paired with \(peer) (identity \(identity)): \(paired.method), \(paired.security)"
                + (paired.bond == nil ? ", not bonded" : ", bonded: " + paired.keyNames.joined(separator: ", "))
                + (note.map { "; the bond was not kept: \($0)" } ?? "")
        case .encrypted(let security):
            if json {
                return Event(event: "encrypted", address: peer.description, secureConnections: security.isSecureConnections,
                             level: security.level).encoded
            }
            return "hwprobe: \(peer) encrypted with the key of its bond (\(security))"
        case .failed, .bondRejected:
            return nil
        }
    }

    /// `pair`'s object with `"event"` first in mind: `paired` (`address`, `identity`, `method`,
    /// `secureConnections`, `bonded`, `keys`) or `encrypted` (`address`, `level`, `secureConnections`).
    struct Event: Encodable {
        var event: String
        var address: String
        var identity: String?
        var method: String?
        var secureConnections: Bool
        var bonded: Bool?
        var keys: [String]?
        var level: Int?
        var note: String?

        var encoded: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(self) else { return "{}" }
            return JSON.escapingControls(String(decoding: data, as: UTF8.self))
        }
    }
}
