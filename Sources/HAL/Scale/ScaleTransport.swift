/// Finds scales and mirrors and connects to them. Implementations: the BLE host stack with the
/// scale drivers, and the fake bench. Flows see only this.
public protocol ScaleTransport: Sendable {
    /// Peripherals as they are seen (the same one again when its advertisement changes).
    /// Discovery stops when the consumer stops iterating.
    func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error>

    func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection
}

/// One live link to a scale or mirror. Events arrive in order on `events` (one consumer);
/// after `.disconnected` the stream ends and every command throws `.disconnected`.
public protocol ScaleConnection: Sendable {
    var device: DiscoveredDevice { get }
    var events: AsyncStream<ScaleEvent> { get }

    /// The mirror's `deviceInfo`; scales without one throw `.unsupported`.
    func readInfo() async throws(ScaleError) -> MirrorInfo
    func send(_ command: MirrorCommand) async throws(ScaleError)
    func readResult() async throws(ScaleError) -> ScanResult
    func disconnect() async
}
