import HAL
import Peripherals
import Transports

/// A cassette played as devices: every recorded peripheral on one virtual controller, reached
/// through our own host stack exactly as `--hci replay:FILE` reaches it. For tests, the same as a
/// HAL `ScaleTransport` with the registered drivers, so a driver or a flow runs on a recorded
/// device on a `ManualClock` (or with `.immediate` timing) in milliseconds, with no peer running.
public enum CassettePlayback {
    /// The recorded peripherals around an in-process controller on `clock`.
    public static func controller(_ cassette: BLECassette, clock: any Clock<Duration>, timing: ReplayTiming = .recorded,
                                  description: String = "replay:", warn: @escaping @Sendable (String) -> Void = { _ in })
        -> VirtualController {
        var configuration = ControllerConfiguration()
        // What our host heard as extended reports after legacy scanning, it hears so again.
        configuration.legacyCommandsSeeExtendedAdvertising = cassette.peripherals.contains {
            $0.advertising.contains { !$0.kind.isLegacy }
        }
        return VirtualController(peripherals: cassette.peripherals.map { ReplayPeripheral($0, timing: timing, warn: warn) },
                                 clock: clock, configuration: configuration, description: description)
    }

    /// Our host stack over that controller.
    public static func central(_ cassette: BLECassette, uri: DeviceURI, clock: any Clock<Duration>, timing: ReplayTiming = .recorded,
                               snoopPath: String? = nil, events: HostEventHandler? = nil, tap: (any HCIPacketTap)? = nil,
                               warn: @escaping @Sendable (String) -> Void = { _ in }) async throws(BLEError) -> BLECentral {
        let stream = controller(cassette, clock: clock, timing: timing, description: uri.description, warn: warn)
        let central = try await BLECentral.open(stream: stream, uri: uri, snoopPath: snoopPath, clock: clock, events: events, tap: tap)
        // The recorded identities behind private addresses, so `gatt IDENTITY` finds the device.
        var resolutions: [BLEAddress: BLEAddress] = [:]
        for peripheral in cassette.peripherals {
            if let identity = peripheral.identity { resolutions[peripheral.address] = identity }
        }
        if !resolutions.isEmpty { await central.host.useRecordedResolutions(resolutions) }
        return central
    }

    /// The cassette as HAL's `ScaleTransport`: discovery and connections through our host stack
    /// and `registry`'s drivers. Call `close` when done (it releases the virtual controller).
    public static func scaleTransport(_ cassette: BLECassette, registry: DriverRegistry, clock: any Clock<Duration>,
                                      timing: ReplayTiming = .recorded, warn: @escaping @Sendable (String) -> Void = { _ in })
        async throws(BLEError) -> (transport: BLEScaleTransport, close: @Sendable () async -> Void) {
        let central = try await central(cassette, uri: .replay(path: "(in memory)"), clock: clock, timing: timing, warn: warn)
        return (BLEScaleTransport(central: central, registry: registry, clock: clock), { await central.close() })
    }
}
