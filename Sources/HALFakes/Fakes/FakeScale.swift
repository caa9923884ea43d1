import HAL

/// A weighing scale that plays a timeline of readings after each connection, then optionally
/// drops the link: enough to exercise `weigh` and the drivers' stable-reading logic.
public struct FakeScale: Sendable {
    public struct Step: Sendable, Hashable {
        public var after: Duration
        public var reading: WeightReading
        public init(after: Duration, reading: WeightReading) {
            self.after = after
            self.reading = reading
        }
    }

    public var device: DiscoveredDevice
    public var steps: [Step]
    /// Drop the link this long after the last reading (nil: stay connected).
    public var disconnectAfterLast: Duration?

    public init(device: DiscoveredDevice, steps: [Step], disconnectAfterLast: Duration? = nil) {
        self.device = device
        self.steps = steps
        self.disconnectAfterLast = disconnectAfterLast
    }

    /// Connects and starts playing the timeline on `clock`.
    public func connect(clock: any Clock<Duration>) -> FakeScaleConnection {
        let link = FakeScaleConnection(device: device)
        let steps = steps
        let tail = disconnectAfterLast
        Task {
            for step in steps {
                guard (try? await clock.sleep(for: step.after)) != nil, link.isConnected else { return }
                link.emit(.weight(step.reading))
            }
            if let tail, (try? await clock.sleep(for: tail)) != nil {
                link.dropLink(.remoteUserTerminated)
            }
        }
        return link
    }
}
