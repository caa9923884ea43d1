import HAL
import Synchronization
import Transports

/// A connected standard scale: its measurement indications become `.weight` events, in the
/// order they arrived, and the link's end becomes `.disconnected`. Scales take no commands.
public final class StandardScaleConnection: ScaleConnection {
    /// The advertisement this connection was opened from.
    public let device: DiscoveredDevice
    /// Readings and the final `.disconnected`; buffers the newest 256 events if nobody reads.
    public let events: AsyncStream<ScaleEvent>
    /// What the scale says it supports, when it let us read it.
    public let weightScaleFeature: WeightScaleFeature?
    /// What the body composition analyser says it supports, when it let us read it.
    public let bodyCompositionFeature: BodyCompositionFeature?

    private let link: BLEConnection
    private let continuation: AsyncStream<ScaleEvent>.Continuation
    private struct State {
        var finished = false
        var pump: Task<Void, Never>?
        var combiner = StandardScaleReadingCombiner()
    }
    private let state = Mutex(State())

    init(device: DiscoveredDevice, link: BLEConnection, notifications: NotificationValues<ATTNotification>,
         weightHandle: UInt16?, compositionHandle: UInt16?,
         weightScaleFeature: WeightScaleFeature?, bodyCompositionFeature: BodyCompositionFeature?) {
        self.device = device
        self.link = link
        self.weightScaleFeature = weightScaleFeature
        self.bodyCompositionFeature = bodyCompositionFeature
        (events, continuation) = AsyncStream.makeStream(of: ScaleEvent.self, bufferingPolicy: .bufferingNewest(256))
        // The pump holds the connection until the link ends, so `.disconnected` always arrives
        // even when the caller keeps only `events`.
        let pump = Task {
            for await notification in notifications {
                self.handle(notification, weightHandle: weightHandle, compositionHandle: compositionHandle)
            }
            // The bearer closes its streams when the link ends; an ATT failure can close it while
            // the link stays up, so end the link too rather than leave it dangling.
            if self.link.disconnectReason == nil { await self.link.disconnect() }
            self.finish(self.link.disconnectReason ?? .localHostTerminated)
        }
        state.withLock { $0.pump = pump }
    }

    /// Values skipped because they could not be parsed, for diagnostics.
    public var malformedValues: Int { state.withLock { $0.combiner.malformedValues } }
    /// Measurements the scale reported as unsuccessful, which yield no `.weight` event.
    public var unsuccessfulMeasurements: Int { state.withLock { $0.combiner.unsuccessfulMeasurements } }

    private func handle(_ notification: ATTNotification, weightHandle: UInt16?, compositionHandle: UInt16?) {
        // Yielding under the lock keeps a reading from slipping out after `.disconnected`.
        state.withLock { state in
            guard !state.finished else { return }
            let reading: WeightReading? = switch notification.handle {
            case weightHandle: state.combiner.weightMeasurement(notification.value)
            case compositionHandle: state.combiner.bodyCompositionMeasurement(notification.value)
            default: nil
            }
            if let reading { continuation.yield(.weight(reading)) }
        }
    }

    private func finish(_ reason: DisconnectReason) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            state.combiner.reset()
            continuation.yield(.disconnected(reason))
            continuation.finish()
        }
    }

    /// Always throws `.unsupported`: the standard profiles carry no device-information command.
    public func readInfo() async throws(ScaleError) -> MirrorInfo {
        throw .unsupported("device information on a standard Bluetooth scale")
    }

    /// Always throws `.unsupported`: a standard scale takes no commands.
    public func send(_ command: MirrorCommand) async throws(ScaleError) {
        throw .unsupported("\(command.name) on a standard Bluetooth scale")
    }

    /// Always throws `.unsupported`: readings arrive as `.weight` events, there is no scan result.
    public func readResult() async throws(ScaleError) -> ScanResult {
        throw .unsupported("scan results on a standard Bluetooth scale")
    }

    /// Ends the link; `events` then yields `.disconnected` and finishes.
    public func disconnect() async {
        await link.disconnect()
        state.withLock { $0.pump }?.cancel()
        finish(link.disconnectReason ?? .localHostTerminated)
    }
}
