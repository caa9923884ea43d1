import HAL

/// The simulated body-scan mirror, its turntable scale and the person using them, as
/// docs/mirror-gatt-v1.md describes them: the one place the bench's mirror behaviour lives.
///
/// It is a value on a timeline (durations from a `Timebase`'s origin), fed what the central does
/// and how far time has moved, and answering with what the mirror says. Two drivers run it:
/// `FakeMirror`, the HAL fake flows are tested against, which turns the outputs into
/// `ScaleEvent`s on a `FakeScaleConnection`; and the virtual controller's mirror peripheral, which
/// turns them into GATT notifications. Neither holds any behaviour of its own, so a flow tested on
/// the fake and `hwprobe scan --hci sim:` meet the same mirror.
///
/// Timings, the person and at most one fault come from the `MirrorScript`. A fault strikes once
/// in the simulation's life, so a retry after it succeeds. A fault that is a condition (no scale,
/// a scale never aligned, a person who never steps on or off, a low battery) holds for the whole
/// session in which it is felt and is gone from the next connection on: the person switched the
/// scale on, plugged the mirror in. It is felt when a client has waited in that session as long
/// as the profile's "taking longer than usual" warning (mirror-gatt-v1.md, "What a client must
/// do"), or, for a low battery, has read it under 15 % or had a scan refused for it. A session
/// that ends sooner (`check` connects briefly several times) leaves it in store.
public struct MirrorSimulation: Sendable {
    /// What the mirror does that the central can see.
    public enum Output: Hashable, Sendable {
        /// A `scanState` notification: a new state or progress, or the error that stopped the scan.
        case scanState(MirrorScanStatus)
        /// A `scale` notification: the scale appeared, was stepped on or off, settled, or a weight tick.
        case scale(ScaleStatus)
        /// An `alignment` notification, one per step of the scale being moved.
        case alignment(Alignment)
        /// The mirror (or the radio) ends the link.
        case dropLink(DisconnectReason)
        /// The mirror stops notifying from now on, though the link stays up (a stuck peripheral).
        case silenced
    }

    /// The timings, person and fault this simulation plays, fixed for its life.
    public let script: MirrorScript

    /// The mirror's scan state now; `idle` at the start of every session.
    public private(set) var state = MirrorScanState.idle
    /// Progress through `scanning` or `processing`, 0 to 100.
    public private(set) var progress: UInt8 = 0
    /// Why the scan failed, while the state is `error`; nil otherwise.
    public private(set) var errorCode: MirrorErrorCode?
    /// The turntable scale as the mirror would report it; not present until the person switches it on.
    public private(set) var scale = ScaleStatus(present: false)
    /// The latest angle and distance reported; unaligned until the script's steps reach the aligned range.
    public private(set) var alignment = Alignment(angleDegrees: 0, distanceCm: 0, aligned: false)
    /// Whether `init` was written this session; the scan token is refused until it is.
    public private(set) var initialized = false
    /// Phases entered since the latest connection, for tests that check where a fault struck.
    public private(set) var phases: [MirrorPhase] = []
    /// How many times a central has connected over the simulation's life.
    public private(set) var connectionCount = 0
    /// Whether a central is connected, as far as the mirror knows.
    public private(set) var isConnected = false

    private var faultFired = false
    /// A condition fault showed in this session: it is spent from the next connection on.
    private var faultFelt = false
    /// Bumped whenever the scan is abandoned; the weight ticker checks it (its own session).
    private var epoch = 0
    private var schedule = SimulationSchedule<Action>(capacity: 64)
    /// The time of the call being handled: timers start from it.
    private var now = Duration.zero
    private var outputs: [Output] = []

    private enum Action: Sendable {
        case scaleSwitchedOn
        case moveScale(angle: Int8, distance: UInt8)
        case settle
        case weightTick(session: Int)
        case personStepsOn
        case personStepsOff
        case becomeReady
        case tick(step: UInt8, every: Duration, expected: MirrorScanState, done: TickDone)
        case dropLink(DisconnectReason)
        case fail(MirrorErrorCode)
        /// A condition fault's moment has passed in this session: it was felt.
        case conditionFelt
    }

    private enum TickDone: Sendable { case stepOff, complete }

    /// A mirror that nobody has connected to yet, playing `script`.
    public init(script: MirrorScript = MirrorScript()) {
        self.script = script
        batteryPercent = script.info.batteryPercent
    }

    /// The battery as `deviceInfo` reports it now: the script's, until a person at the keyboard
    /// changes it (`act(.lowBattery(…))`).
    public private(set) var batteryPercent: UInt8?

    /// `deviceInfo` now: the script's, with the battery as it is (a person at the keyboard may
    /// have changed it), and a `lowBattery` fault's level until the fault is spent.
    public var info: MirrorInfo {
        var info = script.info
        info.batteryPercent = batteryPercent
        if case .lowBattery(let percent) = script.fault, !faultFired { info.batteryPercent = min(percent, batteryPercent ?? percent) }
        return info
    }

    /// What a person at the keyboard can do to the mirror while a central is connected
    /// (`hwprobe serve mirror-v1`), beyond the script: each goes through the same paths the
    /// script's person and faults take, so a client meets what it would on the bench.
    public enum ManualAction: Hashable, Sendable {
        /// The person steps on the scale (as the script's person does when ready).
        case stepOn
        /// The person steps off (mid-scan: stepped off early; when asked: processing starts).
        case stepOff
        /// The turntable is moved out of line (not aligned: 25°, 140 cm), or back in line.
        case scaleOutOfLine(Bool)
        /// The battery drops to 5 % (a start of scan then fails with code 6), or back to the script's.
        case lowBattery(Bool)
        /// The scan stops in `error` with this code, whatever the state.
        case error(MirrorErrorCode)
        /// The mirror ends the link (remote user terminated).
        case dropLink
    }

    /// Applies what the person did and returns what the mirror says.
    public mutating func act(_ action: ManualAction, at now: Duration) -> [Output] {
        begin(now)
        switch action {
        case .stepOn:
            if scale.present, !scale.occupied { personStepsOn() }
        case .stepOff:
            if scale.occupied { personStepsOff() }
        case .scaleOutOfLine(let out):
            if out { moveScale(angle: 25, distance: 140) } else if let aligned = script.alignmentSteps.last {
                moveScale(angle: aligned.angleDegrees, distance: aligned.distanceCm)
            }
        case .lowBattery(let low):
            batteryPercent = low ? 5 : script.info.batteryPercent
        case .error(let code):
            fail(code)
        case .dropLink:
            outputs.append(.dropLink(.remoteUserTerminated))
        }
        return finish()
    }

    /// `scanState` as the mirror would notify it now.
    public var scanStatus: MirrorScanStatus {
        MirrorScanStatus(state: state, progress: progress, error: state == .error ? errorCode : nil)
    }

    /// When the mirror next does something by itself, if it will.
    public var nextDeadline: Duration? { schedule.nextDeadline }

    // MARK: the central

    /// A central connects: a mirror serves one at a time and starts each session idle.
    public mutating func connect(at now: Duration) -> [Output] {
        begin(now)
        if faultFelt { faultFired = true }
        resetSession()
        isConnected = true
        connectionCount += 1
        enter(.connected)
        if striking(.scaleNeverPresent) {
            after(Self.warnings.scalePresent, .conditionFelt)
        } else {
            after(script.scalePresentAfter, .scaleSwitchedOn)
        }
        return finish()
    }

    /// The link ended without the mirror being told (the central went away): what was scheduled
    /// stays, to expire unheard, as a real mirror's timers would until it noticed.
    public mutating func linkLost() {
        isConnected = false
    }

    /// The link ended and the mirror knows: it drops its session's timers. The next connection
    /// starts idle (the profile: disconnection returns the mirror to idle).
    public mutating func disconnected() {
        isConnected = false
        cancelTimers()
    }

    /// Ends everything the simulation has scheduled (a fake outliving its test would keep waking).
    public mutating func shutDown() {
        cancelTimers()
    }

    /// Runs whatever was due by `now`, earliest first. Nothing runs while the link is down.
    public mutating func advance(to now: Duration) -> [Output] {
        begin(now)
        while let (action, due) = schedule.popDueEntry(at: now) {
            guard isConnected else { continue }
            // What the action schedules next counts from when it was due: a late wake-up (a
            // loaded machine, a sped-up clock) runs the overdue ticks then, rather than slowing
            // the mirror's cadence (its scale's five reports a second) for the rest of the run.
            self.now = due
            run(action)
        }
        self.now = now
        return finish()
    }

    /// A write from the central. Returns the refusal, if the mirror refuses it, with what it said meanwhile.
    public mutating func handle(_ command: MirrorCommand, at now: Duration) -> (refusal: ScaleError?, outputs: [Output]) {
        begin(now)
        let refusal = apply(command)
        return (refusal, finish())
    }

    /// The profile's "taking longer than usual" times (mirror-gatt-v1.md, "What a client must
    /// do"): a client that has waited this long in a phase has felt a condition that stops it.
    public static let warnings = (scalePresent: Duration.seconds(20), aligned: Duration.seconds(45),
                                  onScaleAndStable: Duration.seconds(30), steppingOff: Duration.seconds(10))

    /// The central read `deviceInfo`: a low battery it shows is felt.
    public mutating func readInfo() -> MirrorInfo {
        let info = info
        if case .lowBattery = script.fault, !faultFired, let battery = info.batteryPercent, battery < 15 { faultFelt = true }
        return info
    }

    /// Whether the script's fault is `condition` and still to strike.
    private func striking(_ condition: MirrorFault) -> Bool {
        script.fault == condition && !faultFired
    }

    /// `result`: readable once the scan is complete (ATT error 0x02 before).
    public func result() throws(ScaleError) -> ScanResult {
        guard state == .complete else { throw .refused(.startScan, .attError(0x02)) }
        return script.result
    }

    // MARK: the person and the scale

    private mutating func scaleSwitchedOn() {
        scale.present = true
        scale.level = script.scaleLevel
        notifyScale()
        enter(.scalePresent)
        var delay = Duration.zero
        let neverAligned = striking(.neverAligned)
        // Never aligned: the scale is moved once and left there.
        for step in neverAligned ? Array(script.alignmentSteps.prefix(1)) : script.alignmentSteps {
            delay += step.after
            after(delay, .moveScale(angle: step.angleDegrees, distance: step.distanceCm))
        }
        if neverAligned { after(Self.warnings.aligned, .conditionFelt) }
    }

    private mutating func moveScale(angle: Int8, distance: UInt8) {
        let aligned = Alignment.isAligned(angleDegrees: angle, distanceCm: distance)
        let wasAligned = alignment.aligned
        alignment = Alignment(angleDegrees: angle, distanceCm: distance, aligned: aligned)
        outputs.append(.alignment(alignment))
        if aligned && !wasAligned { enter(.aligned) }
    }

    private mutating func personStepsOn() {
        scale.occupied = true
        scale.kilograms = script.kilograms * 0.6
        notifyScale()
        after(script.settle, .settle)
        startWeightTicker(session: epoch)
    }

    /// While occupied the scale reports about five times a second.
    private mutating func startWeightTicker(session: Int) {
        after(.milliseconds(200), .weightTick(session: session))
    }

    private mutating func personStepsOff() {
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

    private mutating func apply(_ command: MirrorCommand) -> ScaleError? {
        switch command {
        case .confirmAlignment:
            guard alignment.aligned else { return .refused(command, .notAligned) }
        case .initialize:
            initialized = true
        case .scanToken(let token):
            guard token.count == 16 else { return .refused(command, .attError(0x0D)) }
            guard initialized else { return .refused(command, .notInitialized) }
            setState(.warmingUp)
            after(script.warmUp, .becomeReady)
        case .startScan:
            guard state == .ready else { return .refused(command, .notReady) }
            if let battery = info.batteryPercent, battery < 10 {
                if case .lowBattery = script.fault { faultFelt = true }
                fail(.batteryLow)
                return nil
            }
            beginScanning()
        case .abort, .reset:
            cancelTimers()
            initialized = false
            setState(.idle)
            if scale.occupied { startWeightTicker(session: epoch) }
        }
        return nil
    }

    // MARK: the mirror's own states

    private mutating func run(_ action: Action) {
        switch action {
        case .scaleSwitchedOn: scaleSwitchedOn()
        case .moveScale(let angle, let distance): moveScale(angle: angle, distance: distance)
        case .settle:
            scale.stable = true
            scale.kilograms = script.kilograms
            notifyScale()
        case .weightTick(let session):
            guard scale.occupied, epoch == session else { return }
            notifyScale()
            startWeightTicker(session: session)
        case .personStepsOn: personStepsOn()
        case .personStepsOff: personStepsOff()
        case .becomeReady: becomeReady()
        case .tick(let step, let interval, let expected, let done): tick(step: step, every: interval, expected: expected, done: done)
        case .dropLink(let reason):
            outputs.append(.dropLink(reason))
            isConnected = false
        case .fail(let code): fail(code)
        case .conditionFelt: faultFelt = true
        }
    }

    private mutating func becomeReady() {
        setState(.ready)
        if !scale.occupied {
            if striking(.personNeverStepsOn) {
                after(Self.warnings.onScaleAndStable, .conditionFelt)
            } else {
                after(script.stepOnAfterReady, .personStepsOn)
            }
        }
    }

    private mutating func beginScanning() {
        setState(.scanning)
        after(script.scanDuration / 20, .tick(step: 5, every: script.scanDuration / 20, expected: .scanning, done: .stepOff))
    }

    private mutating func beginProcessing() {
        setState(.processing)
        after(script.processingDuration / 10, .tick(step: 10, every: script.processingDuration / 10, expected: .processing, done: .complete))
    }

    /// Raises progress by `step` each interval; at 100 the state moves on.
    private mutating func tick(step: UInt8, every interval: Duration, expected: MirrorScanState, done: TickDone) {
        guard state == expected else { return }
        progress = min(100, progress + step)
        if case .stepOffEarly(let at) = script.fault, expected == .scanning, progress >= at, !faultFired {
            faultFired = true
            personStepsOff()
            return
        }
        guard progress >= 100 else {
            notifyState()
            after(interval, .tick(step: step, every: interval, expected: expected, done: done))
            return
        }
        switch done {
        case .stepOff:
            setState(.stepOff)
            if striking(.personNeverStepsOff) {
                after(Self.warnings.steppingOff, .conditionFelt)
            } else {
                after(script.stepOffAfter, .personStepsOff)
            }
        case .complete:
            setState(.complete)
        }
    }

    private mutating func fail(_ code: MirrorErrorCode) {
        errorCode = code
        setState(.error)
    }

    private mutating func setState(_ new: MirrorScanState) {
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
    private mutating func enter(_ phase: MirrorPhase) {
        phases.append(phase)
        guard !faultFired, let fault = script.fault else { return }
        switch fault {
        case .disconnect(let at, let delay) where at == phase:
            faultFired = true
            after(delay, .dropLink(.supervisionTimeout))
        case .error(let code, let at, let delay) where at == phase:
            faultFired = true
            after(delay, .fail(code))
        case .silence(let at) where at == phase:
            faultFired = true
            outputs.append(.silenced)
        default:
            break
        }
    }

    // MARK: bookkeeping

    private mutating func resetSession() {
        cancelTimers()
        state = .idle
        progress = 0
        errorCode = nil
        scale = ScaleStatus(present: false)
        alignment = Alignment(angleDegrees: 0, distanceCm: 0, aligned: false)
        initialized = false
        phases = []
    }

    private mutating func notifyState() { outputs.append(.scanState(scanStatus)) }

    private mutating func notifyScale() { outputs.append(.scale(scale)) }

    private mutating func after(_ delay: Duration, _ action: Action) {
        schedule.add(action, at: now + delay)
    }

    private mutating func cancelTimers() {
        schedule.removeAll()
        epoch += 1
    }

    private mutating func begin(_ time: Duration) {
        now = time
        outputs = []
    }

    private mutating func finish() -> [Output] {
        defer { outputs = [] }
        return outputs
    }
}
