import HAL

/// A radio-free BLE neighbourhood: peripherals appear after given delays and connect through
/// whatever the test or the simulated bench supplies (a `FakeMirror`, a `FakeScale`, a failure).
public struct FakeScaleTransport: ScaleTransport {
    public struct Peripheral: Sendable {
        public var device: DiscoveredDevice
        public var appearsAfter: Duration
        public var connect: @Sendable () async throws(ScaleError) -> any ScaleConnection

        public init(device: DiscoveredDevice, appearsAfter: Duration = .zero,
                    connect: @escaping @Sendable () async throws(ScaleError) -> any ScaleConnection) {
            self.device = device
            self.appearsAfter = appearsAfter
            self.connect = connect
        }

        public static func mirror(_ mirror: FakeMirror, appearsAfter: Duration = .milliseconds(300)) -> Peripheral {
            Peripheral(device: mirror.script.discoveredDevice, appearsAfter: appearsAfter) { await mirror.connect() }
        }
    }

    public let peripherals: [Peripheral]
    private let clock: any Clock<Duration>

    public init(peripherals: [Peripheral], clock: any Clock<Duration>) {
        self.peripherals = peripherals
        self.clock = clock
    }

    public func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DiscoveredDevice.self)
        let clock = clock
        let ordered = peripherals.sorted { $0.appearsAfter < $1.appearsAfter }
        let task = Task {
            var elapsed = Duration.zero
            for peripheral in ordered {
                guard (try? await clock.sleep(for: peripheral.appearsAfter - elapsed)) != nil else { return }
                elapsed = peripheral.appearsAfter
                continuation.yield(peripheral.device)
            }
            // A real scan goes on until the consumer stops it; so does this one.
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
        guard let peripheral = peripherals.first(where: { $0.device.address == device.address }) else {
            throw .notFound("device \(device.address)")
        }
        return try await peripheral.connect()
    }
}
