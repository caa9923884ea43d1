import HAL
import Synchronization

/// A scale/mirror link a test (or a fake device) drives by hand: it emits events on demand,
/// records every command, and answers commands through a responder.
public final class FakeScaleConnection: ScaleConnection {
    /// How the fake answers a command: return to accept it, throw to refuse it; it may also emit events.
    public typealias Responder = @Sendable (MirrorCommand) async throws(ScaleError) -> Void
    /// What `readResult()` returns or throws; by default it throws `.unsupported`.
    public typealias ResultProvider = @Sendable () async throws(ScaleError) -> ScanResult

    /// The device this link was opened to.
    public let device: DiscoveredDevice
    /// Events passed to `emit` and the final `.disconnected`, buffered without limit for the one consumer.
    public let events: AsyncStream<ScaleEvent>
    private let continuation: AsyncStream<ScaleEvent>.Continuation

    private struct State {
        var connected = true
        var silent = false
        var commands: [MirrorCommand] = []
        var responder: Responder?
        var info: MirrorInfo?
        var result: ResultProvider = { () throws(ScaleError) -> ScanResult in throw .unsupported("reading a result") }
    }

    private let state: Mutex<State>

    /// Opens a connected link; without `info` it acts as a scale, and without a responder it accepts every command.
    public init(device: DiscoveredDevice, info: MirrorInfo? = nil, responder: Responder? = nil) {
        self.device = device
        (events, continuation) = AsyncStream.makeStream(of: ScaleEvent.self, bufferingPolicy: .unbounded)
        state = Mutex(State(responder: responder, info: info))
    }

    /// Every command sent so far, in order.
    public var sentCommands: [MirrorCommand] { state.withLock { $0.commands } }
    /// False once the link was dropped by either side.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Replaces how commands are answered from now on; nil accepts them all.
    public func setResponder(_ responder: Responder?) { state.withLock { $0.responder = responder } }
    /// Replaces what `readResult()` gives from now on.
    public func setResult(_ provider: @escaping ResultProvider) {
        state.withLock { $0.result = provider }
    }
    /// A silent link keeps its connection but delivers no more events (a stuck peripheral).
    public func setSilent(_ silent: Bool) { state.withLock { $0.silent = silent } }

    /// Delivers an event as if the device had sent it; ignored once disconnected or silent.
    public func emit(_ event: ScaleEvent) {
        let deliver = state.withLock { $0.connected && !$0.silent }
        if deliver { continuation.yield(event) }
    }

    /// The device or the radio ends the link.
    public func dropLink(_ reason: DisconnectReason) {
        let wasConnected = state.withLock { s -> Bool in
            defer { s.connected = false }
            return s.connected
        }
        guard wasConnected else { return }
        continuation.yield(.disconnected(reason))
        continuation.finish()
    }

    /// The `info` given at creation; a link without one throws `.unsupported`, as a plain scale does.
    public func readInfo() async throws(ScaleError) -> MirrorInfo {
        let (connected, info) = state.withLock { ($0.connected, $0.info) }
        guard connected else { throw .disconnected(.localHostTerminated) }
        guard let info else { throw .unsupported("device information") }
        return info
    }

    /// Records the command and passes it to the responder; throws `.disconnected` if the link is or goes down.
    public func send(_ command: MirrorCommand) async throws(ScaleError) {
        let (connected, responder) = state.withLock { s -> (Bool, Responder?) in
            if s.connected { s.commands.append(command) }
            return (s.connected, s.responder)
        }
        guard connected else { throw .disconnected(.localHostTerminated) }
        try await responder?(command)
        if !isConnected { throw .disconnected(.localHostTerminated) }
    }

    /// Asks the result provider; throws `.disconnected` once the link is down.
    public func readResult() async throws(ScaleError) -> ScanResult {
        let (connected, provider) = state.withLock { ($0.connected, $0.result) }
        guard connected else { throw .disconnected(.localHostTerminated) }
        return try await provider()
    }

    /// Ends the link from our side, as `localHostTerminated`.
    public func disconnect() async {
        dropLink(.localHostTerminated)
    }
}
