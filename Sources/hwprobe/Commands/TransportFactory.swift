import HAL
import BLEProtocol
import Transports
import Peripherals
import VirtualController

/// Turns a `--hci` URI into a scale transport: our host stack with the registered drivers, over
/// a real controller or over the simulated bench's virtual one (`sim:`).
struct TransportFactory: Sendable {
    var bench: SimulatedBench
    var registry = DriverRegistry.linked
    /// `-v`: every controller this factory opens (the bench's too) reports its events here.
    var log: HostEventLog?
    /// `--record FILE`: sees the HCI traffic of the controller a command opens (the first one
    /// for `list`), whatever kind of controller it is.
    var recorder: CassetteRecorder?
    /// `--record FILE` and `replay:FILE` for cameras and pads (the same cassette).
    var media: MediaCassettes?
    /// Where a replay says how the session differs from its recording (stderr).
    var replayWarning: @Sendable (String) -> Void = { _ in }
    /// `gatt`, `weigh`, `scan`, `check`: bonds used and pairing done as the device asks
    /// (`--pair`, `--io`, `--passkey`), on the controllers that can pair.
    var pairing: AutoPairing?
    /// Where the bond stores are (XDG_STATE_HOME, HOME): every controller opened resolves the
    /// private addresses of its bonded devices with their IRKs. nil: none resolved (tests).
    var bondEnvironment: [String: String]?

    /// The bench's clock for the bench and for cassettes (both run at `HWPROBE_SIM_SPEED`).
    func clock(for uri: DeviceURI) -> any Clock<Duration> {
        switch uri {
        case .sim, .replay: bench.clock
        default: ContinuousClock()
        }
    }

    /// The body-scan and weighing flows' transport: our host stack with the registered drivers.
    /// `close` releases the controller.
    func scaleTransport(for uri: DeviceURI, snoopPath: String? = nil) async throws(CLIFailure)
        -> (transport: any ScaleTransport, close: @Sendable () async -> Void) {
        switch uri {
        case .sim, .hci, .tcp, .uart, .replay:
            let central = try await central(for: uri, snoopPath: snoopPath)
            return (BLEScaleTransport(central: central, registry: registry, clock: clock(for: uri)), { await central.close() })
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not an HCI controller (use hci:N, uart:…, tcp:HOST:PORT, sim: or replay:FILE)")
        }
    }

    /// Opens a controller with our host stack: a real one, or the bench's virtual controller
    /// (with the scenario its `sim:` options name).
    func central(for uri: DeviceURI, snoopPath: String?, record: Bool = true) async throws(CLIFailure) -> BLECentral {
        let tap = record ? recorder : nil
        switch uri {
        case .hci, .tcp, .uart:
            let central: BLECentral
            do { central = try await BLECentral.open(uri, snoopPath: snoopPath, events: log?.handler, tap: tap) } catch { throw CLIFailure(error) }
            if let pairing {
                do throws(CLIFailure) { try await pairing.install(on: central.host) } catch {
                    await central.close()
                    throw error
                }
            }
            if let bondEnvironment { await Self.resolvePrivateAddresses(on: central.host, environment: bondEnvironment) }
            return central
        case .sim:
            try pairing?.refuse(uri)
            let bench = try bench.configured(for: uri)
            do { return try await bench.central(uri: uri, snoopPath: snoopPath, events: log?.handler, tap: tap) } catch { throw CLIFailure(error) }
        case .replay(let path):
            let cassette: BLECassette
            do { cassette = try CassetteReader.read(path: path) } catch { throw CLIFailure(kind: .device, message: error.described(as: "\(uri)")) }
            let central: BLECentral
            do {
                central = try await CassettePlayback.central(cassette, uri: uri, clock: bench.clock, snoopPath: snoopPath, events: log?.handler,
                                                             tap: tap, warn: replayWarning)
            } catch {
                throw CLIFailure(error)
            }
            // The replayed devices pair and encrypt as recorded (simulated, no keys).
            await pairing?.installForReplay(on: central.host)
            return central
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not an HCI controller (use hci:N, uart:…, tcp:HOST:PORT, sim: or replay:FILE)")
        }
    }

    /// Gives `host` the IRKs of its controller's bonds, so that a bonded device advertising from
    /// a resolvable private address is listed, watched and connected to under its identity
    /// (issue 29). Best effort: a controller without a store, or a store that cannot be read,
    /// resolves nothing (the commands that pair say why when they need the store).
    static func resolvePrivateAddresses(on host: HCIHost, environment: [String: String]) async {
        guard let store = try? await PairingOptions.bondStore(host: host, environment: environment) else { return }
        await host.useResolvingIdentities(AddressResolver(bonds: store.current.bonds).identities)
    }

    /// Peripherals seen on `uri` for `duration` (on the bench's clock for `sim:`).
    /// `scanning` is called once the controller is open, as the `duration` starts.
    func discover(on uri: DeviceURI, for duration: Duration, snoopPath: String?, record: Bool = true,
                  scanning: @Sendable () -> Void = {}) async throws(CLIFailure) -> [DiscoveredDevice] {
        let central = try await central(for: uri, snoopPath: snoopPath, record: record)
        scanning()
        do {
            let found = try await Discovery.collect(central.discover(), for: duration, clock: clock(for: uri))
            await central.close()
            return found
        } catch let error as BLEError {
            await central.close()
            throw CLIFailure(error)
        } catch {
            await central.close()
            throw CLIFailure(kind: .device, message: "\(error)")
        }
    }
}

extension CLIFailure {
    init(_ error: HCIAccessError) {
        switch error {
        case .noKernelSupport: self.init(kind: .noKernelSupport, message: error.description)
        case .notPermitted: self.init(kind: .permission, message: error.description)
        case .busy: self.init(kind: .busy, message: error.description)
        case .noSuchController, .system: self.init(kind: .device, message: error.description)
        }
    }
}

extension CLIFailure {
    /// The contract's error kinds for what the host stack reports.
    init(_ error: BLEError) {
        switch error {
        case .link(let link):
            if case .access(let access) = link { self.init(access) } else { self.init(kind: .device, message: link.description) }
        case .connectionTimedOut, .commandTimedOut, .attTimedOut:
            self.init(kind: .timedOut, message: error.description)
        case .disconnected:
            self.init(kind: .disconnected, message: error.description)
        case .pairingFailed, .bondRejected:
            // hwprobe-cli.md, third edition: a pairing that fails is exit 1 with its reason
            // (cancelled at its prompt with Ctrl-C: the interrupt's code, 130).
            self.init(kind: .incomplete, message: error.description,
                      exitOverride: SignalHandling.shared.interruption.map(SignalHandling.exitCode(for:)))
        case .invalid:
            self.init(kind: .usage, message: error.description)
        default:
            self.init(kind: .device, message: error.description)
        }
    }
}
