import HAL

/// A radio-free BLE neighbourhood: peripherals appear after given delays and connect through
/// whatever the test or the simulated bench supplies (a `FakeMirror`, a `FakeScale`, a failure).
public struct FakeScaleTransport: ScaleTransport {
    /// One device in the neighbourhood: when it shows up and what connecting to it gives.
    public struct Peripheral: Sendable {
        /// What discovery reports for it, and the address `connect(to:)` looks it up by.
        public var device: DiscoveredDevice
        /// How long after discovery starts the device is reported.
        public var appearsAfter: Duration
        /// Called on each connect: return a link, or throw to simulate a failed connection.
        public var connect: @Sendable () async throws(ScaleError) -> any ScaleConnection

        /// Builds a peripheral that appears at once unless told otherwise.
        public init(device: DiscoveredDevice, appearsAfter: Duration = .zero,
                    connect: @escaping @Sendable () async throws(ScaleError) -> any ScaleConnection) {
            self.device = device
            self.appearsAfter = appearsAfter
            self.connect = connect
        }

        /// A simulated mirror as a peripheral, seen shortly after discovery starts as a real one would be.
        public static func mirror(_ mirror: FakeMirror, appearsAfter: Duration = .milliseconds(300)) -> Peripheral {
            Peripheral(device: mirror.script.discoveredDevice, appearsAfter: appearsAfter) { await mirror.connect() }
        }
    }

    /// The devices that will appear, in any order; discovery reports them by `appearsAfter`.
    public let peripherals: [Peripheral]
    private let clock: any Clock<Duration>

    /// Builds the neighbourhood; delays are slept on `clock`, so a `ManualClock` puts the test in charge.
    public init(peripherals: [Peripheral], clock: any Clock<Duration>) {
        self.peripherals = peripherals
        self.clock = clock
    }

    /// Reports each peripheral once at its time and then keeps going, like a real scan, until the consumer stops.
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

    /// Connects to the peripheral with this address; throws `.notFound` when there is none.
    public func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
        guard let peripheral = peripherals.first(where: { $0.device.address == device.address }) else {
            throw .notFound("device \(device.address)")
        }
        return try await peripheral.connect()
    }
}
