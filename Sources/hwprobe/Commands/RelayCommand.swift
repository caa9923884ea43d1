import BLEProtocol
import Foundation
import HAL
import Peripherals
import Synchronization
import Transports

/// `hwprobe relay --hci URI --to URI ADDRESS` (hwprobe-cli.md, third edition): hwprobe between an
/// app and its device. It connects to the device through `--to`, advertises what the device
/// advertises through `--hci` (the app's side), and forwards every ATT PDU both ways as it comes
/// (`RelayPeripheral` on `PeripheralHost`, `RelayDeviceSide` on the device's link). The device's
/// database is read once at the start (to name what the app does); after that the device is
/// connected when an app connects, so it meets the app's session from its start. Either side
/// leaving ends the other's link, and the relay advertises again for the next app. Runs until
/// Ctrl-C or `--seconds` (exit 0); exit 3 when a controller cannot be opened or the device is not
/// found (or not readable) at the start.
struct RelayCommand: Sendable {
    var console: Console
    var transports: TransportFactory

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let hciText = invocation.value("--hci"), let toText = invocation.value("--to"),
              let target = invocation.positionals.first else {
            throw CLIFailure(kind: .usage, message: "relay needs --hci URI (the app's side), --to URI (the device's side) and the device's ADDRESS")
        }
        let appURI = try DeviceURIArgument.parse(hciText, option: "--hci")
        switch appURI {
        case .hci, .tcp, .uart: break
        default:
            throw CLIFailure(kind: .usage, message: "relay advertises for the app on a real controller: give --hci hci:N, uart:… or tcp:HOST:PORT "
                             + "(\(appURI) has no radio an app could reach)")
        }
        let deviceURI = try DeviceURIArgument.parse(toText, option: "--to")
        guard let address = BLEAddress(string: target) else {
            throw CLIFailure(kind: .usage, message: "\(target) is not a Bluetooth address: use AA:BB:CC:DD:EE:FF, with /random for a random one")
        }
        let limit = try ServeCommand.limit(invocation.value("--seconds"))
        let choice = invocation.value("--advertising") ?? "automatic"
        guard let advertisingChoice = PeripheralHost.AdvertisingChoice(rawValue: choice) else {
            throw CLIFailure(kind: .usage, message: "--advertising \(choice): use automatic, legacy or extended")
        }

        // One controller for both sides when both options name it (where it can be central and
        // peripheral at once); otherwise one each.
        let deviceCentral = try await transports.central(for: deviceURI, snoopPath: nil, record: false)
        let appCentral: BLECentral
        if hciText == toText {
            appCentral = deviceCentral
        } else {
            do {
                appCentral = try await BLECentral.open(appURI, snoopPath: invocation.value("--btsnoop"), events: transports.log?.handler)
            } catch {
                await deviceCentral.close()
                var failure = CLIFailure(error)
                if failure.exitCode != 3 { failure = CLIFailure(kind: .device, message: failure.message) }
                throw failure
            }
        }
        let outcome: Result<Int32, CLIFailure>
        do throws(CLIFailure) {
            outcome = .success(try await relay(invocation, address: address, deviceCentral: deviceCentral, appCentral: appCentral,
                                               advertising: advertisingChoice, limit: limit))
        } catch {
            outcome = .failure(error)
        }
        await appCentral.close()
        if hciText != toText { await deviceCentral.close() }
        return try outcome.get()
    }

    private func relay(_ invocation: Invocation, address: BLEAddress, deviceCentral: BLECentral, appCentral: BLECentral,
                       advertising choice: PeripheralHost.AdvertisingChoice, limit: Duration?) async throws(CLIFailure) -> Int32 {
        let console = console
        let json = invocation.wantsJSON
        let clock = ContinuousClock()
        let start = clock.now
        // Each side's security is its own: the app's as `--pairing` says (as `serve`'s), the
        // device's from this side's bonds, or Just Works, when the device asks for it.
        let sharedController = appCentral.host === deviceCentral.host
        let pairing = try await ServeCommand.usePairing(invocation, on: appCentral.host, console: console)
        let secures = sharedController && pairing.mode != "off" ? true : await Self.secureDeviceSide(deviceCentral, console: console)
        let device = RelayDeviceSide(central: deviceCentral, address: address, clock: clock, secures: secures)
        let say: @Sendable (ServeSession.Line) -> Void = { line in
            console.out(json ? ServeSession.json(line) : ServeSession.human(line) + "\n")
        }
        let deviceLine: @Sendable (String) -> ServeSession.Line = { event in
            var line = ServeSession.Line(event, at: start.duration(to: clock.now))
            line.side = "device"
            return line
        }

        let (records, advertisedFrom) = try await device.findAdvertising()
        // The device's database, read once at the start, names what the app does (the app
        // discovers it itself, through the relay). The device's link then waits for the app's.
        let firstConnection = try await device.connect(advertisedFrom)
        let services: [GATTServiceTree]
        do {
            services = try await firstConnection.gatt.discoverAll()
        } catch {
            await firstConnection.disconnect()
            throw CLIFailure(kind: .device, message: "\(advertisedFrom): its GATT database could not be read: \(error)")
        }
        await firstConnection.disconnect()
        var found = deviceLine("found")
        found.address = advertisedFrom.description
        found.form = records.first.map { $0.kind.isLegacy ? "legacy" : "extended" }
        say(found)
        let session = ServeSession(discovered: services)
        let timeline = ReplayPeripheral.advertisingTimeline(records)
        guard let copied = timeline.first?.advertising else {
            throw CLIFailure(kind: .device, message: "\(advertisedFrom) advertised nothing the relay could copy")
        }
        let relay = RelayPeripheral(address: advertisedFrom, advertising: copied)
        let forwards = AsyncStream.makeStream(of: RelayForward.self)
        let server = PeripheralHost(host: appCentral.host, peripheral: relay, clock: clock,
                                    options: PeripheralHost.Options(advertising: choice, publicAddress: true,
                                                                    requiredSecurity: pairing.requiredSecurity)) { event in
            if pairing.mode == "required", case .connected(let info) = event {
                // Ask the app to pair (or encrypt with its bond) at once (Security Request).
                Task { await appCentral.host.requestSecurity(info.handle) }
            }
            for var line in session.take(event, at: start.duration(to: clock.now)) {
                line.side = "app"
                say(line)
            }
        } forward: { asked in
            for forward in asked {
                // The app left: the device's link ends now, not after a request still in flight
                // (and again in order, for a link still being made).
                if forward == .endDeviceLink { Task { await device.endLink() } }
                forwards.continuation.yield(forward)
            }
        }
        let observe: @Sendable (RelayDeviceSide.Event) -> Void = { event in
            var line: ServeSession.Line
            switch event {
            case .connected(let address):
                line = deviceLine("connected")
                line.address = address.description
            case .mtu(let mtu):
                line = deviceLine("mtu")
                line.mtu = Int(mtu)
            case .disconnected(let reason):
                line = deviceLine("disconnected")
                line.reason = "0x" + Hex.byte(reason)
            case .unreachable(let why):
                line = deviceLine("connected")
                line.error = why
            case .secured(let outcome):
                line = ServeSession.securedLine(outcome, at: start.duration(to: clock.now))
                line.side = "device"
            }
            say(line)
        }

        let ended = AsyncStream.makeStream(of: Void.self)
        let interrupt = SignalHandling.shared.onInterrupt { ended.continuation.yield() }
        defer { interrupt.end() }
        var failure: CLIFailure?
        await withTaskGroup(of: CLIFailure?.self) { group in
            group.addTask { await ServeCommand.serving(server, on: appCentral.uri) }
            group.addTask {
                await device.carryOut(forwards.stream, to: advertisedFrom, for: server, observe: observe)
                return nil
            }
            group.addTask {
                await ServeCommand.untilEnded(ended.stream, or: limit, clock: clock)
                return nil
            }
            failure = await group.next() ?? nil
            forwards.continuation.finish()
            group.cancelAll()
            await device.endLink()
            while let more = await group.next() { if failure == nil { failure = more } }
        }
        transports.recorder?.adopt(Self.cassette(session.cassette, device: advertisedFrom, advertising: records))
        if let failure { throw failure }
        return ExitCode.success
    }

    /// Lets the device's side pair (Just Works, bonding) or encrypt with a bond when the device
    /// asks for security; a controller whose bond store cannot be had goes on without, and says so.
    static func secureDeviceSide(_ central: BLECentral, console: Console) async -> Bool {
        switch central.uri {
        case .hci, .tcp, .uart: break
        default: return false // the bench and cassettes pair with nobody
        }
        do throws(CLIFailure) {
            let bonds = try await PairingOptions.bondStore(host: central.host, environment: console.environment)
            let configuration = SecurityConfiguration(ioCapability: .noInputNoOutput, requiresMITM: false)
            await central.host.useSecurity(HostSecurity(configuration: configuration, bonds: bonds,
                                                        delegate: UnattendedPairing(passkey: nil, console: console)))
            return true
        } catch {
            console.err("hwprobe relay: the device's side will not pair: \(error.message)\n")
            return false
        }
    }

    /// The recording of the app's side made the device's: its own address and advertising (as the
    /// `--to` controller heard it), with every connection the app made, answered as the device
    /// answered it. `--hci replay:` and `serve replay:` both play it.
    static func cassette(_ recorded: BLECassette, device: BLEAddress, advertising: [BLECassette.AdvertisingRecord]) -> BLECassette {
        var peripheral = BLECassette.Peripheral(address: device)
        peripheral.advertising = advertising
        peripheral.connections = recorded.peripherals.first?.connections ?? []
        return BLECassette(peripherals: [peripheral])
    }
}
