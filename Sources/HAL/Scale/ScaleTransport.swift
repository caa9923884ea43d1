/// Finds scales and mirrors and connects to them. Implementations: the BLE host stack with the
/// scale drivers, and the fake bench. Flows see only this.
public protocol ScaleTransport: Sendable {
    /// Peripherals as they are seen (the same one again when its advertisement changes).
    /// Discovery stops when the consumer stops iterating.
    func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error>

    /// Opens a link to a device `discover()` returned and picks its driver; throws if none claims it.
    func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection
}

/// One live link to a scale or mirror. Events arrive in order on `events` (one consumer);
/// after `.disconnected` the stream ends and every command throws `.disconnected`.
public protocol ScaleConnection: Sendable {
    /// The device this link was opened to, as it was discovered.
    var device: DiscoveredDevice { get }
    /// Everything the device reports, in order, ending after `.disconnected`; read by one consumer only.
    var events: AsyncStream<ScaleEvent> { get }

    /// The mirror's `deviceInfo`; scales without one throw `.unsupported`.
    func readInfo() async throws(ScaleError) -> MirrorInfo
    /// Writes one mirror command and returns once the mirror accepted it; plain scales throw `.unsupported`.
    func send(_ command: MirrorCommand) async throws(ScaleError)
    /// Reads the mirror's `result`, meaningful once the scan state is `complete`; plain scales throw.
    func readResult() async throws(ScaleError) -> ScanResult
    /// Ends the link; `events` then yields `.disconnected` and finishes.
    func disconnect() async
}
