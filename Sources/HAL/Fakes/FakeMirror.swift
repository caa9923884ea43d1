/// A body-scan mirror that behaves as mirror-gatt-v1.md says, on an injected clock, with the person
/// and scale played by a `MirrorScript`. The simulated bench and the flow tests both use it.
public actor FakeMirror {
    public let script: MirrorScript
    private let clock: any Clock<Duration>

    private var connection: FakeScaleConnection?
    private var state = MirrorScanState.idle
    private var progress: UInt8 = 0
    private var errorCode: MirrorErrorCode?
    private var scale = ScaleStatus(present: false)
    private var alignment = Alignment(angleDegrees: 0, distanceCm: 0, aligned: false)
    private var initialized = false
    /// Bumped by abort, reset and disconnection so timers of the old scan do nothing.
    private var epoch = 0
    private var timers: [Int: Task<Void, Never>] = [:]
    private var nextTimer = 0
    /// A fault strikes once in a mirror's life, so a retry after it can succeed.
    private var faultFired = false

    /// Phases entered so far, for tests that check where a fault struck.
    public private(set) var phases: [MirrorPhase] = []
    public private(set) var connectionCount = 0

    public init(script: MirrorScript = MirrorScript(), clock: any Clock<Duration>) {
        self.script = script
        self.clock = clock
    }

    public var scanState: MirrorScanState { state }
    /// The link of the latest connection, for tests that check what the client wrote.
    public var currentConnection: FakeScaleConnection? { connection }

    /// Accepts a connection: a mirror serves one central at a time and starts idle.
    public func connect() -> FakeScaleConnection {
        connection?.dropLink(.remoteUserTerminated)
        resetSession()
        connectionCount += 1
        let link = FakeScaleConnection(device: script.discoveredDevice, info: script.info) { [weak self] command throws(ScaleError) in
            guard let self else { throw .disconnected(.remoteUserTerminated) }
            try await self.handle(command)
        }
        link.setResult { [weak self] () async throws(ScaleError) -> ScanResult in
            guard let self else { throw .disconnected(.remoteUserTerminated) }
            return try await self.resultIfComplete()
        }
        connection = link
        enter(.connected)
        if script.fault != .scaleNeverPresent {
            after(script.scalePresentAfter) { $0.scaleSwitchedOn() }
        }
        return link
    }

    private func resetSession() {
        cancelTimers()
        state = .idle
        progress = 0
        errorCode = nil
        scale = ScaleStatus(present: false)
        alignment = Alignment(angleDegrees: 0, distanceCm: 0, aligned: false)
        initialized = false
        phases = []
    }

    // MARK: the person and the scale

    private func scaleSwitchedOn() {
        scale.present = true
        scale.level = script.scaleLevel
        notifyScale()
        enter(.scalePresent)
        var delay = Duration.zero
        let steps = script.fault == .neverAligned ? Array(script.alignmentSteps.prefix(1)) : script.alignmentSteps
        for step in steps {
            delay += step.after
            after(delay) { $0.moveScale(angle: step.angleDegrees, distance: step.distanceCm) }
        }
    }

    private func moveScale(angle: Int8, distance: UInt8) {
        let aligned = Alignment.isAligned(angleDegrees: angle, distanceCm: distance)
        let wasAligned = alignment.aligned
        alignment = Alignment(angleDegrees: angle, distanceCm: distance, aligned: aligned)
        notify(.alignment(alignment))
        if aligned && !wasAligned { enter(.aligned) }
    }

    private func personStepsOn() {
        scale.occupied = true
        scale.kilograms = script.kilograms * 0.6
        notifyScale()
        let session = epoch
        after(script.settle) { mirror in
            mirror.scale.stable = true
            mirror.scale.kilograms = mirror.script.kilograms
            mirror.notifyScale()
        }
        startWeightTicker(session: session)
    }

    /// While occupied the scale reports about five times a second.
    private func startWeightTicker(session: Int) {
        after(.milliseconds(200)) { mirror in
            guard mirror.scale.occupied, mirror.epoch == session else { return }
            mirror.notifyScale()
            mirror.startWeightTicker(session: session)
        }
    }

    private func personStepsOff() {
        scale.occupied = false
        scale.stable = false
        scale.kilograms = 0
        notifyScale()
        switch state {
        case .scanning: fail(.steppedOffEarly)
        case .stepOff: beginProcessing()
        default: break
        }
    }

    // MARK: commands

    private func handle(_ command: MirrorCommand) throws(ScaleError) {
        switch command {
        case .confirmAlignment:
            guard alignment.aligned else { throw .refused(command, .notAligned) }
        case .initialize(_, _):
            initialized = true
        case .scanToken(let token):
            guard token.count == 16 else { throw .refused(command, .attError(0x0D)) }
            guard initialized else { throw .refused(command, .notInitialized) }
            setState(.warmingUp)
            after(script.warmUp) { $0.becomeReady() }
        case .startScan:
            guard state == .ready else { throw .refused(command, .notReady) }
            if let battery = script.info.batteryPercent, battery < 10 {
                fail(.batteryLow)
                return
            }
            beginScanning()
        case .abort, .reset:
            cancelTimers()
            initialized = false
            setState(.idle)
            if scale.occupied { startWeightTicker(session: epoch) }
        }
    }

    private func resultIfComplete() throws(ScaleError) -> ScanResult {
        guard state == .complete else { throw .refused(.startScan, .attError(0x02)) }
        return script.result
    }

    // MARK: the mirror's own states

    private func becomeReady() {
        setState(.ready)
        if script.fault != .personNeverStepsOn && !scale.occupied {
            after(script.stepOnAfterReady) { $0.personStepsOn() }
        }
    }

    private func beginScanning() {
        setState(.scanning)
        tick(step: 5, every: script.scanDuration / 20) { mirror in
            mirror.setState(.stepOff)
            if mirror.script.fault != .personNeverStepsOff {
                mirror.after(mirror.script.stepOffAfter) { $0.personStepsOff() }
            }
        }
    }

    private func beginProcessing() {
        setState(.processing)
        tick(step: 10, every: script.processingDuration / 10) { $0.setState(.complete) }
    }

    /// Raises progress by `step` each interval; runs `done` at 100.
    private func tick(step: UInt8, every interval: Duration, done: @escaping @Sendable (isolated FakeMirror) -> Void) {
        let expected = state
        after(interval) { mirror in
            guard mirror.state == expected else { return }
            mirror.progress = min(100, mirror.progress + step)
            if case .stepOffEarly(let at) = mirror.script.fault, expected == .scanning, mirror.progress >= at,
               !mirror.faultFired {
                mirror.faultFired = true
                mirror.personStepsOff()
                return
            }
            if mirror.progress >= 100 {
                done(mirror)
            } else {
                mirror.notifyState()
                mirror.tick(step: step, every: interval, done: done)
            }
        }
    }

    private func fail(_ code: MirrorErrorCode) {
        errorCode = code
        setState(.error)
    }

    private func setState(_ new: MirrorScanState) {
        state = new
        progress = 0
        if new != .error { errorCode = nil }
        notifyState()
        switch new {
        case .warmingUp: enter(.warmingUp)
        case .ready: enter(.ready)
        case .scanning: enter(.scanning)
        case .stepOff: enter(.stepOff)
        case .processing: enter(.processing)
        case .complete: enter(.complete)
        case .idle, .error: break
        }
    }

    /// Records a phase and arms the script's fault if it strikes here.
    private func enter(_ phase: MirrorPhase) {
        phases.append(phase)
        guard !faultFired, let fault = script.fault else { return }
        switch fault {
        case .disconnect(let at, let delay) where at == phase:
            faultFired = true
            after(delay) { $0.connection?.dropLink(.supervisionTimeout) }
        case .error(let code, let at, let delay) where at == phase:
            faultFired = true
            after(delay) { $0.fail(code) }
        case .silence(let at) where at == phase:
            faultFired = true
            connection?.setSilent(true)
        default:
            break
        }
    }

    // MARK: notifications and timers

    private func notifyState() {
        notify(.scanState(MirrorScanStatus(state: state, progress: progress, error: state == .error ? errorCode : nil)))
    }

    private func notifyScale() { notify(.scale(scale)) }

    private func notify(_ event: ScaleEvent) { connection?.emit(event) }

    /// Runs `action` after `delay` on the injected clock, unless the scan was abandoned meanwhile.
    private func after(_ delay: Duration, _ action: @escaping @Sendable (isolated FakeMirror) -> Void) {
        let session = epoch
        let clock = clock
        nextTimer += 1
        let id = nextTimer
        timers[id] = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.fire(id: id, session: session, action)
        }
    }

    private func fire(id: Int, session: Int, _ action: @Sendable (isolated FakeMirror) -> Void) {
        timers[id] = nil
        guard session == epoch, connection?.isConnected == true else { return }
        action(self)
    }

    private func cancelTimers() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        epoch += 1
    }

    /// Ends the simulated mirror's timers (a fake outliving its test would keep sleeping).
    public func shutDown() {
        cancelTimers()
        connection?.dropLink(.remoteUserTerminated)
    }
}
