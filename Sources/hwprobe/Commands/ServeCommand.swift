import BLEProtocol
import Foundation
import HAL
import Peripherals
import Synchronization
import Transports

/// `hwprobe serve --hci URI DEVICE` (hwprobe-cli.md, third edition): hwprobe as the device. The
/// controller advertises DEVICE and answers as its GATT server through our host in the
/// peripheral role (`PeripheralHost`), so an app, a phone or another host connects to it as to
/// the real thing. Runs until Ctrl-C, `q` or `--seconds` (exit 0); exit 3 when the controller
/// cannot be opened or refuses to advertise.
struct ServeCommand: Sendable {
    var console: Console
    var transports: TransportFactory
    /// The served device's timeline (`HWPROBE_SIM_SPEED` for the simulated ones, as on the bench).
    var deviceClock: any Clock<Duration>
    /// Who answers the pairing prompts; nil: ``UnattendedPairing``.
    var person: (any PairingDelegate)?

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let hciText = invocation.value("--hci"), let deviceText = invocation.positionals.first else {
            throw CLIFailure(kind: .usage, message: "serve needs --hci URI and a DEVICE")
        }
        let uri = try DeviceURIArgument.parse(hciText, option: "--hci")
        switch uri {
        case .hci, .tcp, .uart: break
        default:
            throw CLIFailure(kind: .usage, message: "serve plays a device on a real controller: give --hci hci:N, uart:… or tcp:HOST:PORT "
                             + "(\(uri) has no radio a central could reach)")
        }
        let limit = try Self.limit(invocation.value("--seconds"))
        if let name = invocation.value("--name"), name.utf8.count > 248 || name.isEmpty {
            throw CLIFailure(kind: .usage, message: "--name must be 1 to 248 bytes (the Device Name characteristic's limit)")
        }
        let console = console
        let device = try ServedDevices.resolve(deviceText, name: invocation.value("--name")) { console.err("hwprobe: \($0)\n") }
        let central: BLECentral
        do {
            central = try await BLECentral.open(uri, snoopPath: invocation.value("--btsnoop"), events: transports.log?.handler)
        } catch {
            var failure = CLIFailure(error)
            if failure.exitCode != 3 { failure = CLIFailure(kind: .device, message: failure.message) }
            throw failure
        }
        let pairing: ServedPairing
        do throws(CLIFailure) {
            pairing = try await Self.usePairing(invocation, on: central.host, console: console, person: person)
        } catch {
            await central.close()
            throw error
        }
        let host = central.host
        let session = ServeSession(database: device.peripheral.attributeDatabase)
        let json = invocation.wantsJSON
        let clock = ContinuousClock()
        let start = clock.now
        let screen = Locked<ServeScreen?>(nil)
        var options = device.options
        options.requiredSecurity = pairing.requiredSecurity
        options.privacy = pairing.privacy
        let server = PeripheralHost(host: central.host, peripheral: device.peripheral, clock: deviceClock, options: options) { event in
            if pairing.mode == "required", case .connected(let info) = event {
                // Ask the central to pair (or encrypt with its bond) at once (Security Request).
                Task { await host.requestSecurity(info.handle) }
            }
            let lines = session.take(event, at: start.duration(to: clock.now))
            if json {
                for line in lines { console.out(ServeSession.json(line)) }
            } else if let drawing = screen.withLock({ $0 }) {
                drawing.changed()
            } else {
                for line in lines { console.out(ServeSession.human(line) + "\n") }
            }
        }
        let terminal = json ? nil : TerminalSession.forProcess(console: console, wantsKeys: true)
        let ended = AsyncStream.makeStream(of: Void.self)
        if let terminal, terminal.drawsScreen {
            let drawing = ServeScreen(console: console, terminal: terminal, label: device.label, session: session, server: server)
            screen.withLock { $0 = drawing }
            terminal.setRepaint { drawing.draw() }
            terminal.setKeyHandler { key in
                switch key {
                case .character("q"), .interrupt, .escape: ended.continuation.yield()
                case .character(let character):
                    server.press(character)
                    drawing.draw()
                default: break
                }
            }
            terminal.begin()
        }
        let interrupt = SignalHandling.shared.onInterrupt { ended.continuation.yield() }
        var failure: CLIFailure?
        await withTaskGroup(of: CLIFailure?.self) { group in
            group.addTask { await Self.serving(server, on: uri) }
            group.addTask {
                await Self.untilEnded(ended.stream, or: limit, clock: clock)
                return nil
            }
            if let screenDrawing = screen.withLock({ $0 }) {
                // The device's own state changes with time (a scan's progress): a calm refresh.
                group.addTask {
                    while (try? await clock.sleep(for: .milliseconds(250))) != nil { await screenDrawing.refresh() }
                    return nil
                }
            }
            failure = await group.next() ?? nil
            group.cancelAll()
            while let more = await group.next() { if failure == nil { failure = more } }
        }
        interrupt.end()
        terminal?.end()
        await central.close()
        transports.recorder?.adopt(session.cassette)
        if let failure { throw failure }
        if terminal?.drawsScreen == true {
            console.err("hwprobe serve: served \(device.label); \(session.snapshot.served) values notified or indicated\n")
        }
        return ExitCode.success
    }

    /// How the served side pairs: `--pairing off|optional|required`, and for `required` the
    /// security every request but Exchange MTU waits for (``ATTSecurityGate``).
    struct ServedPairing: Sendable {
        var mode: String
        var requiredSecurity: SecurityLevel?
        /// `--privacy`: advertise from private addresses made with our IRK.
        var privacy: PrivateAddressRotation?
    }

    /// `--pairing off|optional|required` with `--io` and `--passkey`: the host pairs as the
    /// served device when a central asks (and, for `required`, the caller asks the central at
    /// once and serves nothing but MTU exchange until the link is encrypted: authenticated when
    /// this side insists on MITM protection). `serve`, and `relay`'s app side.
    static func usePairing(_ invocation: Invocation, on host: HCIHost, console: Console,
                           person: (any PairingDelegate)? = nil) async throws(CLIFailure) -> ServedPairing {
        let pairing = invocation.value("--pairing") ?? "off"
        guard ["off", "optional", "required"].contains(pairing) else {
            throw CLIFailure(kind: .usage, message: "--pairing \(pairing): use off, optional or required")
        }
        guard pairing != "off" else {
            if invocation.has("--privacy") {
                throw CLIFailure(kind: .usage, message: "--privacy needs --pairing optional or required: only a central we bonded with "
                                 + "gets the key that recognises our private addresses")
            }
            return ServedPairing(mode: pairing)
        }
        let passkey = try PairingOptions.passkey(invocation.value("--passkey"))
        let io = try PairingOptions.ioCapability(invocation.value("--io"), passkey: passkey)
        let (bonds, identity) = try await PairingOptions.bondStoreWithOwnIdentity(host: host, environment: console.environment)
        var configuration = SecurityConfiguration(ioCapability: io, requiresMITM: io != .noInputNoOutput)
        configuration.localIdentity = identity
        await host.useSecurity(HostSecurity(configuration: configuration, bonds: bonds, delegate: person ?? UnattendedPairing(passkey: passkey, console: console)))
        let required: SecurityLevel? = pairing == "required" ? (configuration.requiresMITM ? .authenticated : .encrypted) : nil
        let privacy = invocation.has("--privacy") ? PrivateAddressRotation(irk: identity.irk) : nil
        return ServedPairing(mode: pairing, requiredSecurity: required, privacy: privacy)
    }

    /// Runs `server` until it is cancelled; the controller's failure, if it fails, as the CLI says it.
    static func serving(_ server: PeripheralHost, on uri: DeviceURI) async -> CLIFailure? {
        do throws(BLEError) {
            try await server.run()
            return nil
        } catch {
            return CLIFailure(kind: .device, message: "\(uri): \(error)")
        }
    }

    /// Returns when `ended` yields (Ctrl-C, `q`) or `limit` (`--seconds`) has passed.
    static func untilEnded(_ ended: AsyncStream<Void>, or limit: Duration?, clock: ContinuousClock) async {
        guard let limit else {
            for await _ in ended { break }
            return
        }
        await withTaskGroup(of: Void.self) { end in
            end.addTask { try? await clock.sleep(for: limit) }
            end.addTask { for await _ in ended { return } }
            _ = await end.next()
            end.cancelAll()
        }
    }

    static func limit(_ text: String?) throws(CLIFailure) -> Duration? {
        guard let text else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw CLIFailure(kind: .usage, message: "--seconds must be a number of seconds more than 0 and at most 86400, e.g. 30")
        }
        return .milliseconds(Int64(seconds * 1000))
    }
}

/// The one screen `serve` draws on a terminal: what it advertises, the central, the MTU, the
/// subscriptions, the device's state and keys, and the last few things the central did.
final class ServeScreen: Sendable {
    private let console: Console
    private let terminal: TerminalSession
    private let label: String
    private let session: ServeSession
    private let server: PeripheralHost
    private let device = Mutex<(controls: [PeripheralControl], state: String)?>(nil)
    /// When the screen was last drawn, and whether something changed since.
    private let paced = Mutex<(last: ContinuousClock.Instant?, dirty: Bool)>((nil, false))
    /// A stream notifies thousands of values a second: the screen follows at most this often.
    static let interval: Duration = .milliseconds(50)

    init(console: Console, terminal: TerminalSession, label: String, session: ServeSession, server: PeripheralHost) {
        self.console = console
        self.terminal = terminal
        self.label = label
        self.session = session
        self.server = server
    }

    /// Asks the served device for its state, then draws.
    func refresh() async {
        let now = await server.device
        device.withLock { $0 = now }
        draw()
    }

    /// Something the screen shows changed: drawn now unless it was drawn less than `interval`
    /// ago (the next refresh draws it then).
    func changed() {
        let now = ContinuousClock.now
        let due = paced.withLock { state -> Bool in
            if let last = state.last, last.duration(to: now) < Self.interval {
                state.dirty = true
                return false
            }
            return true
        }
        if due { draw() }
    }

    func draw() {
        paced.withLock { $0 = (ContinuousClock.now, false) }
        let snapshot = session.snapshot
        let width = max(20, terminal.size.columns)
        var lines = ["hwprobe serve · \(label)", ""]
        if let central = snapshot.central {
            lines.append("central     \(central) · MTU \(snapshot.mtu)")
        } else {
            lines.append("advertising " + (snapshot.advertising ?? "…"))
        }
        let subscriptions = snapshot.subscriptions.sorted { $0.key < $1.key }
            .map { "0x\(Hex.word($0.key)) \($0.value.uuid) (\($0.value.indications ? "indications" : "notifications"))" }
        lines.append("subscribed  " + (subscriptions.isEmpty ? "nothing" : subscriptions.joined(separator: ", ")))
        var keys = ["q quit"]
        if let device = device.withLock({ $0 }) {
            lines.append("device      " + device.state)
            keys = device.controls.map { "\($0.keys) \($0.label)" } + keys
        }
        // The keys wrap at the terminal's width rather than lose the last ones.
        var keyLine = "keys        "
        for (index, key) in keys.enumerated() {
            let piece = (index == 0 ? "" : " · ") + key
            if keyLine.count + piece.count > width, index > 0 {
                lines.append(keyLine)
                keyLine = "            " + key
            } else {
                keyLine += piece
            }
        }
        lines.append(keyLine)
        lines += ["", "recent"] + snapshot.recent.map { "  " + $0 }
        // Text from the central and the device is escaped before the terminal sees it.
        let body = lines.map { String(PrintableText.escaping($0, keepingLayout: false).prefix(width)) }
        console.draw("\u{1B}[H\u{1B}[2J" + body.joined(separator: "\r\n"))
    }
}
