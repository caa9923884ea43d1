import BLEProtocol
import HAL

/// The central role over one controller: what `hwprobe` and the scale drivers use. It opens the
/// controller named by a URI, scans (merging scan responses into their advertisements), and connects.
public struct BLECentral: Sendable {
    /// The host stack over the controller, for what this wrapper does not offer.
    public let host: HCIHost
    /// The controller this central opened, for messages and logs.
    public let uri: DeviceURI
    /// Where the stack reports what it does (see `HostEvent`); nil when nobody listens.
    public let events: HostEventHandler?

    /// Opens and initialises the controller; `snoopPath` captures all HCI traffic in btsnoop format.
    /// `events` hears about the controller, discoveries, connections and ATT on this central;
    /// `tap` (a `CassetteRecorder`) sees every HCI packet both ways.
    public static func open(_ uri: DeviceURI, snoopPath: String? = nil, clock: any Clock<Duration> = ContinuousClock(),
                            configuration: HCIHost.Configuration = HCIHost.Configuration(),
                            events: HostEventHandler? = nil, tap: (any HCIPacketTap)? = nil) async throws(BLEError) -> BLECentral {
        let stream: any HCIByteStream
        do { stream = try await HCIStreams.open(uri) } catch { throw .link(error) }
        return try await open(stream: stream, uri: uri, snoopPath: snoopPath, clock: clock, configuration: configuration, events: events,
                              tap: tap)
    }

    /// The same over a stream already open: the in-process virtual controller, or a test's.
    public static func open(stream: any HCIByteStream, uri: DeviceURI, snoopPath: String? = nil,
                            clock: any Clock<Duration> = ContinuousClock(),
                            configuration: HCIHost.Configuration = HCIHost.Configuration(),
                            events: HostEventHandler? = nil, tap: (any HCIPacketTap)? = nil) async throws(BLEError) -> BLECentral {
        var snoop: BTSnoopWriter?
        if let snoopPath {
            do { snoop = try BTSnoopWriter(path: snoopPath) } catch {
                await stream.close()
                throw .capture(error)
            }
        }
        let host = HCIHost(stream: stream, snoop: snoop, clock: clock, configuration: configuration, events: events, tap: tap)
        do {
            try await host.start()
        } catch {
            await host.close()
            throw error
        }
        events?(.controllerOpened(uri, address: await host.localAddress))
        return BLECentral(host: host, uri: uri, events: events)
    }

    /// Peripherals as they advertise, each report merged with what was seen of it before.
    /// Reports whose advertising data is malformed are skipped, not fatal. A device advertising
    /// from a private address a bond's IRK resolves comes under its identity address
    /// (`resolvedFrom` the private one; ``HCIHost/useResolvingIdentities(_:)``).
    public func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        let host = host
        let events = events
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DiscoveredDevice.self, bufferingPolicy: .bufferingNewest(256))
        let task = Task {
            do {
                // Recent peripherals only: enough to merge each scan response into its advertisement.
                var seen = BoundedPeripheralMap<DiscoveredDevice>(capacity: 512, policy: .evicting)
                for try await report in try await host.scan() {
                    guard let advertisement = try? AdvertisingData.parse(report.data, connectable: report.connectable) else { continue }
                    var device = DiscoveredDevice(address: report.resolvedIdentity ?? report.address, rssi: report.rssi,
                                                  advertisement: advertisement,
                                                  resolvedFrom: report.resolvedIdentity == nil ? nil : report.address)
                    if let earlier = seen[device.address] {
                        device.advertisement = earlier.advertisement.merging(advertisement)
                        if report.isScanResponse { device.rssi = earlier.rssi }
                    }
                    seen.set(device, for: device.address)
                    events?(.peripheralSeen(device))
                    continuation.yield(device)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Connects to `address`; `timeout` nil uses the host's `connectTimeout` (10 s unless configured).
    public func connect(_ address: BLEAddress, timeout: Duration? = nil) async throws(BLEError) -> BLEConnection {
        try await host.connect(to: address, timeout: timeout)
    }

    /// Closes the controller: pending commands, scans and attempts fail, and every open link ends as transport lost.
    public func close() async {
        await host.close()
    }
}
