import HAL
import Synchronization

/// HAL's `ScaleTransport` on a real controller: discovery through our host stack, and connections
/// handed to whichever registered driver claims the device — a GATT driver for scales and
/// mirrors that take connections, a broadcast driver for scales that only advertise.
public struct BLEScaleTransport: ScaleTransport {
    /// The central devices are discovered and connected through.
    public let central: BLECentral
    /// The drivers offered each device; the one with the most specific matching rule handles it.
    public let registry: DriverRegistry
    private let clock: any Clock<Duration>

    /// A transport over `central`; `clock` times the drivers' waits (the real clock unless a test injects one).
    public init(central: BLECentral, registry: DriverRegistry, clock: any Clock<Duration> = ContinuousClock()) {
        self.central = central
        self.registry = registry
        self.clock = clock
    }

    /// Devices as the central discovers them, scan responses merged into their advertisements.
    public func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        central.discover()
    }

    /// Connects through the driver that claims the device; throws `.unsupported` when none does.
    public func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
        guard let claim = registry.claim(.advertisement(device.advertisement)) else {
            throw .unsupported("no driver claims \(device.name ?? device.address.description)")
        }
        if let broadcast = claim.driver as? any BroadcastScaleDriver {
            return BroadcastScaleConnection(device: device, driver: broadcast, discovery: central.discover())
        }
        guard let driver = claim.driver as? any GATTScaleDriver else {
            throw .unsupported("\(claim.descriptor.name) is not a BLE scale driver")
        }
        let connection: BLEConnection
        do { connection = try await central.connect(device.address) } catch { throw error.scaleError() }
        do {
            return try await driver.open(connection, device: device, clock: clock)
        } catch {
            await connection.disconnect()
            throw error
        }
    }
}

/// A scale that never connects: each advertisement it sends carries a reading (or, encrypted
/// with a key that is missing or wrong, says it cannot be read).
final class BroadcastScaleConnection: ScaleConnection {
    let device: DiscoveredDevice
    let events: AsyncStream<ScaleEvent>
    private let task: Mutex<Task<Void, Never>?>
    private let continuation: AsyncStream<ScaleEvent>.Continuation

    init(device: DiscoveredDevice, driver: any BroadcastScaleDriver, discovery: AsyncThrowingStream<DiscoveredDevice, any Error>) {
        self.device = device
        let (stream, continuation) = AsyncStream.makeStream(of: ScaleEvent.self, bufferingPolicy: .bufferingNewest(64))
        events = stream
        self.continuation = continuation
        let address = device.address
        task = Mutex(Task {
            var lastPayload: [[UInt8]]?
            do {
                for try await seen in discovery where seen.address == address {
                    // Only a changed payload is a new reading; scales repeat each one many times.
                    // Service data (Xiaomi) and manufacturer data (QN's AA BB frames) both count,
                    // in a fixed order so the same advertisement always compares equal.
                    let ad = seen.advertisement
                    let payload = ad.serviceData.keys.sorted().compactMap { ad.serviceData[$0] }
                        + ad.manufacturerData.keys.sorted().compactMap { ad.manufacturerData[$0] }
                    guard lastPayload != payload else { continue }
                    lastPayload = payload
                    do throws(BroadcastReadingError) {
                        if let reading = try driver.reading(from: seen.advertisement, sentBy: seen.address) { continuation.yield(.weight(reading)) }
                    } catch {
                        // A key missing or wrong: said each time a new payload cannot be read,
                        // never turned into a reading.
                        continuation.yield(.unreadable(error))
                    }
                }
            } catch {
                continuation.yield(.disconnected(.transportLost("\(error)")))
            }
            continuation.finish()
        })
    }

    func readInfo() async throws(ScaleError) -> MirrorInfo { throw .unsupported("device information on a broadcast scale") }
    func send(_ command: MirrorCommand) async throws(ScaleError) { throw .unsupported("\(command.name) on a broadcast scale") }
    func readResult() async throws(ScaleError) -> ScanResult { throw .unsupported("scan results on a broadcast scale") }

    func disconnect() async {
        task.withLock { $0?.cancel() }
        continuation.yield(.disconnected(.localHostTerminated))
        continuation.finish()
    }
}
