import HAL

/// A weighing scale that plays a timeline of readings after each connection, then optionally
/// drops the link: enough to exercise `weigh` and the drivers' stable-reading logic.
public struct FakeScale: Sendable {
    /// One reading of the timeline and the pause before it.
    public struct Step: Sendable, Hashable {
        /// The wait before this reading, counted from the previous one (or from connecting).
        public var after: Duration
        /// The reading delivered as a `.weight` event.
        public var reading: WeightReading
        /// Builds one step.
        public init(after: Duration, reading: WeightReading) {
            self.after = after
            self.reading = reading
        }
    }

    /// How the scale appears in discovery and on its connection.
    public var device: DiscoveredDevice
    /// The readings played, in order, on every connection.
    public var steps: [Step]
    /// Drop the link this long after the last reading (nil: stay connected).
    public var disconnectAfterLast: Duration?

    /// Builds a scale that stays connected after its last reading unless told otherwise.
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
