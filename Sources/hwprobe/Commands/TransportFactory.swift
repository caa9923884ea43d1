import HAL
import Transports

/// Turns a `--hci` URI into a scale transport: our host stack with the registered drivers, over
/// a real controller or over the simulated bench's virtual one (`sim:`).
struct TransportFactory: Sendable {
    var bench: SimulatedBench
    var registry = DriverRegistry(drivers: linkedDrivers)
    /// `-v`: every controller this factory opens (the bench's too) reports its events here.
    var log: HostEventLog?

    func clock(for uri: DeviceURI) -> any Clock<Duration> {
        if case .sim = uri { return bench.clock }
        return ContinuousClock()
    }

    /// The body-scan and weighing flows' transport: our host stack with the registered drivers.
    /// `close` releases the controller.
    func scaleTransport(for uri: DeviceURI, snoopPath: String? = nil) async throws(CLIFailure)
        -> (transport: any ScaleTransport, close: @Sendable () async -> Void) {
        switch uri {
        case .sim, .hci, .tcp, .uart:
            let central = try await central(for: uri, snoopPath: snoopPath)
            return (BLEScaleTransport(central: central, registry: registry, clock: clock(for: uri)), { await central.close() })
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not an HCI controller (use hci:N, uart:…, tcp:HOST:PORT or sim:)")
        }
    }

    /// Opens a controller with our host stack: a real one, or the bench's virtual controller
    /// (with the scenario its `sim:` options name).
    func central(for uri: DeviceURI, snoopPath: String?) async throws(CLIFailure) -> BLECentral {
        switch uri {
        case .hci, .tcp, .uart:
            do { return try await BLECentral.open(uri, snoopPath: snoopPath, events: log?.handler) } catch { throw CLIFailure(error) }
        case .sim:
            let bench = try bench.configured(for: uri)
            do { return try await bench.central(uri: uri, snoopPath: snoopPath, events: log?.handler) } catch { throw CLIFailure(error) }
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not an HCI controller (use hci:N, uart:…, tcp:HOST:PORT or sim:)")
        }
    }

    /// Peripherals seen on `uri` for `duration` (on the bench's clock for `sim:`).
    /// `scanning` is called once the controller is open, as the `duration` starts.
    func discover(on uri: DeviceURI, for duration: Duration, snoopPath: String?,
                  scanning: @Sendable () -> Void = {}) async throws(CLIFailure) -> [DiscoveredDevice] {
        let central = try await central(for: uri, snoopPath: snoopPath)
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
        case .invalid:
            self.init(kind: .usage, message: error.description)
        default:
            self.init(kind: .device, message: error.description)
        }
    }
}
