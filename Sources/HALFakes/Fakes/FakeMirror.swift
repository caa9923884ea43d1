import HAL

/// A body-scan mirror that behaves as docs/mirror-gatt-v1.md says, on an injected clock, with the person
/// and scale played by a `MirrorScript`: flow tests use it as a `ScaleConnection`.
///
/// The behaviour is `MirrorSimulation`'s, the same one the virtual controller serves over GATT
/// on the simulated bench; this actor only carries it to a `FakeScaleConnection` and keeps one
/// timer on the clock for the simulation's next deadline.
public actor FakeMirror {
    /// The behaviour this mirror plays, fixed for its lifetime.
    public let script: MirrorScript
    private let timebase: Timebase

    private var simulation: MirrorSimulation
    private var connection: FakeScaleConnection?
    private var timer: (deadline: Duration, task: Task<Void, Never>)?
    /// Tells a timer that woke after being replaced that it is no longer the one.
    private var timerGeneration = 0

    /// Builds an idle mirror; every timing in `script` runs on `clock`.
    public init(script: MirrorScript = MirrorScript(), clock: any Clock<Duration>) {
        self.script = script
        timebase = Timebase(clock)
        simulation = MirrorSimulation(script: script)
    }

    /// Phases entered so far, for tests that check where a fault struck.
    public var phases: [MirrorPhase] { simulation.phases }
    /// How many times a client has connected, for tests of reconnecting.
    public var connectionCount: Int { simulation.connectionCount }
    /// The state the simulated mirror is in now, as it would report it in `scanState`.
    public var scanState: MirrorScanState { simulation.state }
    /// The link of the latest connection, for tests that check what the client wrote.
    public var currentConnection: FakeScaleConnection? { connection }

    /// Accepts a connection: a mirror serves one central at a time and starts idle.
    public func connect() -> FakeScaleConnection {
        connection?.dropLink(.remoteUserTerminated)
        // The link answers readInfo with what the mirror reports as this session begins.
        let outputs = simulation.connect(at: timebase.now)
        let link = FakeScaleConnection(device: script.discoveredDevice, info: simulation.readInfo()) { [weak self] command throws(ScaleError) in
            guard let self else { throw .disconnected(.remoteUserTerminated) }
            try await self.handle(command)
        }
        link.setResult { [weak self] () async throws(ScaleError) -> ScanResult in
            guard let self else { throw .disconnected(.remoteUserTerminated) }
            return try await self.result()
        }
        connection = link
        deliver(outputs)
        return link
    }

    private func handle(_ command: MirrorCommand) throws(ScaleError) {
        noticeLinkState()
        let (refusal, outputs) = simulation.handle(command, at: timebase.now)
        deliver(outputs)
        if let refusal { throw refusal }
    }

    private func result() throws(ScaleError) -> ScanResult {
        try simulation.result()
    }

    /// Ends the simulated mirror's timers (a fake outliving its test would keep sleeping).
    public func shutDown() {
        simulation.shutDown()
        timer?.task.cancel()
        timer = nil
        connection?.dropLink(.remoteUserTerminated)
    }

    // MARK: carrying the simulation

    /// The client may have ended the link on its side; the simulation's timers then expire unheard.
    private func noticeLinkState() {
        if connection?.isConnected != true { simulation.linkLost() }
    }

    private func fire(_ generation: Int) {
        guard generation == timerGeneration else { return }
        timer = nil
        noticeLinkState()
        deliver(simulation.advance(to: timebase.now))
    }

    private func deliver(_ outputs: [MirrorSimulation.Output]) {
        for output in outputs {
            switch output {
            case .scanState(let status): connection?.emit(.scanState(status))
            case .scale(let status): connection?.emit(.scale(status))
            case .alignment(let alignment): connection?.emit(.alignment(alignment))
            case .dropLink(let reason): connection?.dropLink(reason)
            case .silenced: connection?.setSilent(true)
            }
        }
        rearm()
    }

    /// One sleeper on the clock, for the simulation's earliest deadline.
    private func rearm() {
        let next = simulation.nextDeadline
        if timer?.deadline == next { return }
        timer?.task.cancel()
        timer = nil
        timerGeneration += 1
        guard let next else { return }
        let timebase = timebase
        let generation = timerGeneration
        timer = (next, Task { [weak self] in
            do { try await timebase.sleep(until: next) } catch { return }
            await self?.fire(generation)
        })
    }
}
