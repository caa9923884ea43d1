import BLEProtocol
import Foundation
import HAL
import Peripherals
import Synchronization
import Transports

/// `hwprobe relay --hci URI --to URI ADDRESS` (hwprobe-cli.md, third edition): hwprobe between an
/// app and its device. It connects to the device through `--to`, advertises what the device
/// advertises through `--hci` (the app's side), and forwards every ATT PDU both ways as it comes
/// (`RelayPeripheral` on `PeripheralHost`, `RelayDeviceSide` on the device's link). Either side
/// leaving ends the other's link; then the relay connects to the device again and waits for the
/// next app. Runs until Ctrl-C or `--seconds` (exit 0); exit 3 when a controller cannot be
/// opened, the device is not found or cannot be reached again.
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
        let device = RelayDeviceSide(central: deviceCentral, address: address, clock: clock)
        let say: @Sendable (ServeSession.Line) -> Void = { line in
            console.out(json ? ServeSession.json(line) : ServeSession.human(line) + "\n")
        }
        let deviceLine: @Sendable (String) -> ServeSession.Line = { event in
            let t = start.duration(to: clock.now)
            let seconds = Double(t.components.seconds) + Double(t.components.attoseconds) / 1e18
            var line = ServeSession.Line(event: event, t: (seconds * 1000).rounded() / 1000)
            line.side = "device"
            return line
        }

        let (records, advertisedFrom) = try await device.findAdvertising()
        let firstConnection = try await device.connect(advertisedFrom)
        var connected = deviceLine("connected")
        connected.address = advertisedFrom.description
        say(connected)
        // The device's database, for naming what the app does (the app discovers it through the relay).
        let services: [GATTServiceTree]
        do {
            services = try await firstConnection.gatt.discoverAll()
        } catch {
            await firstConnection.disconnect()
            throw CLIFailure(kind: .device, message: "\(advertisedFrom): its GATT database could not be read: \(error)")
        }
        let session = ServeSession(discovered: services)
        let timeline = ReplayPeripheral.advertisingTimeline(records)
        guard let copied = timeline.first?.advertising else {
            throw CLIFailure(kind: .device, message: "\(advertisedFrom) advertised nothing the relay could copy")
        }
        let relay = RelayPeripheral(address: advertisedFrom, advertising: copied)
        let forwards = AsyncStream.makeStream(of: RelayForward.self)
        let server = PeripheralHost(host: appCentral.host, peripheral: relay, clock: clock,
                                    options: PeripheralHost.Options(advertising: choice, publicAddress: true)) { event in
            for var line in session.take(event, at: start.duration(to: clock.now)) {
                line.side = "app"
                say(line)
            }
        } forward: { asked in
            for forward in asked {
                // The app left: the device's link ends now, not after a request still in flight.
                if forward == .endDeviceLink { Task { await device.endLink() } } else { forwards.continuation.yield(forward) }
            }
        }

        let ended = AsyncStream.makeStream(of: Void.self)
        let interrupt = SignalHandling.shared.onInterrupt { ended.continuation.yield() }
        defer { interrupt.end() }
        var failure: CLIFailure?
        await withTaskGroup(of: CLIFailure?.self) { group in
            group.addTask {
                do throws(BLEError) {
                    try await server.run()
                    return nil
                } catch {
                    return CLIFailure(kind: .device, message: "\(appCentral.uri): \(error)")
                }
            }
            group.addTask {
                await device.carryOut(forwards.stream, for: server) { mtu in
                    var line = deviceLine("mtu")
                    line.mtu = Int(mtu)
                    say(line)
                }
                return nil
            }
            group.addTask {
                // The device's links, one after another: each followed until it ends, then the
                // device is connected again for the next app.
                var connection = firstConnection
                while !Task.isCancelled {
                    let reason = await device.follow(connection, to: server)
                    var line = deviceLine("disconnected")
                    line.reason = "0x" + Hex.byte(reason)
                    say(line)
                    guard !Task.isCancelled else { break }
                    do throws(CLIFailure) {
                        connection = try await device.connect(advertisedFrom)
                    } catch {
                        return Task.isCancelled ? nil : error
                    }
                    var line2 = deviceLine("connected")
                    line2.address = advertisedFrom.description
                    say(line2)
                    server.deviceSaid(.connected)
                }
                return nil
            }
            group.addTask {
                if let limit {
                    await withTaskGroup(of: Void.self) { end in
                        end.addTask { try? await clock.sleep(for: limit) }
                        end.addTask { for await _ in ended.stream { return } }
                        _ = await end.next()
                        end.cancelAll()
                    }
                } else {
                    for await _ in ended.stream { break }
                }
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
