import HAL
import Synchronization

/// The body-scan engine (docs/flows.md §3, docs/mirror-gatt-v1.md). It talks to a mirror through HAL's
/// `ScaleTransport` only, keeps every wait on the injected clock with a warning and a deadline,
/// and publishes screens, cues and announcements on `outputs`. `run()` performs one attempt; call
/// it again to retry after a failure (it finds and connects to the mirror afresh).
package final class BodyScanFlow: Sendable {
    package let outputs: AsyncStream<FlowOutput>
    private let output: AsyncStream<FlowOutput>.Continuation
    private let transport: any ScaleTransport
    private let clock: any Clock<Duration>
    private let configuration: BodyScanConfiguration
    /// The inbox of the attempt in progress, so the person's choices reach it.
    private let current = Mutex<AsyncStream<ScanInput>.Continuation?>(nil)
    private let lastState = Mutex<BodyScanState?>(nil)

    package init(transport: any ScaleTransport, clock: any Clock<Duration>, configuration: BodyScanConfiguration) {
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        (outputs, output) = AsyncStream.makeStream(of: FlowOutput.self, bufferingPolicy: .unbounded)
    }

    /// The state the flow is in (or ended in), for renderers that poll.
    public var state: BodyScanState? { lastState.withLock { $0 } }

    // MARK: the person's answers

    /// Asks the attempt in progress to stop; its `run()` then returns a `.cancelled` outcome.
    /// Does nothing between attempts.
    public func cancel() { send(.cancel) }
    package func pick(mirror address: BLEAddress) { send(.pick(address)) }
    package func confirmAlignment() { send(.confirm) }
    package func realign() { send(.realign) }

    /// The `ScreenAction.id`s of the flow's buttons, so whatever draws them can press them.
    package static let confirmActionID = BodyScanScreens.confirmActionID
    package static let realignActionID = BodyScanScreens.realignActionID
    package static let retryActionID = BodyScanScreens.retryActionID
    package static let doneActionID = BodyScanScreens.doneActionID

    /// Ends `outputs` once no further attempt will be made.
    public func close() { output.finish() }

    private func send(_ action: ScanUserAction) {
        _ = current.withLock { $0?.yield(.user(action)) }
    }

    // MARK: one attempt

    /// Runs one attempt, from finding the mirror to a result or a failure. It never throws: the
    /// outcome says how it ended, with every state entered.
    public func run() async -> BodyScanOutcome {
        let attempt = ScanAttempt(flow: self, transport: transport, clock: clock, configuration: configuration, output: output)
        current.withLock { $0 = attempt.post }
        let outcome = await attempt.execute()
        current.withLock { $0 = nil }
        return outcome
    }

    fileprivate func entered(_ state: BodyScanState) {
        lastState.withLock { $0 = state }
    }
}

enum ScanUserAction: Sendable, Hashable {
    case cancel, pick(BLEAddress), confirm, realign
}

/// Everything an attempt waits for arrives here, in order: mirror events, discoveries, timers,
/// command results and the person's answers. One queue means one place decides what happens next.
enum ScanInput: Sendable {
    case event(ScaleEvent)
    case discovered(DiscoveredDevice)
    case discoveryFailed(String)
    case timer(Int)
    case user(ScanUserAction)
    case done(Int, Result<CommandReply, ScaleError>)
    /// Not an input: asks a wait's handler whether what is already known satisfies it.
    case probe
}

enum CommandReply: Sendable {
    case none
    case info(MirrorInfo)
    case result(ScanResult)
    case connection(any ScaleConnection)
}

/// How an attempt stops early.
enum ScanStop: Error {
    case failed(BodyScanFailure)
    case cancelled
}

/// What a wait's handler decides about one input.
enum ScanWaitStep {
    case keepWaiting
    /// Real progress was made (never a repeat of what was already known): the wait's warning
    /// and deadline start over.
    case restartDeadline
    case done
}

/// One run of the flow. Lives inside the task that runs it, so its state needs no lock.
final class ScanAttempt {
    private unowned let flow: BodyScanFlow
    private let transport: any ScaleTransport
    private let clock: any Clock<Duration>
    private let configuration: BodyScanConfiguration
    private let output: AsyncStream<FlowOutput>.Continuation
    private var motion: MotionSettings { configuration.motion }
    private var deadlines: BodyScanDeadlines { configuration.deadlines }

    let post: AsyncStream<ScanInput>.Continuation
    private var inbox: AsyncStream<ScanInput>.Iterator
    /// Inputs that arrived while a command was outstanding, handled by the next wait.
    private var pending: [ScanInput] = []
    private var timers: [Int: Task<Void, Never>] = [:]
    private var background: [Task<Void, Never>] = []
    private var nextID = 0

    private var states: [BodyScanState] = []
    private var screen: Screen?
    /// The screen as its state last drew it, before any *taking longer* line was added.
    private var drawn: Screen?
    /// The *taking longer* line of the state now on screen, once its warning time has passed: it
    /// stays beside whatever that state draws next (a new alignment tip), until the state ends.
    private var slowHint: String?
    /// The mirror this attempt connected to (or tried to).
    private var chosenMirror: BLEAddress?
    private var link: (any ScaleConnection)?
    private var scale: ScaleStatus?
    private var alignment: Alignment?
    private var mirror: MirrorScanStatus?

    init(flow: BodyScanFlow, transport: any ScaleTransport, clock: any Clock<Duration>,
         configuration: BodyScanConfiguration, output: AsyncStream<FlowOutput>.Continuation) {
        self.flow = flow
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        self.output = output
        let (stream, continuation) = AsyncStream.makeStream(of: ScanInput.self, bufferingPolicy: .unbounded)
        post = continuation
        inbox = stream.makeAsyncIterator()
    }

    func execute() async -> BodyScanOutcome {
        var outcome: BodyScanOutcome
        do {
            let result = try await scan()
            enter(.complete, BodyScanScreens.complete(result, motion: motion))
            cue(.success)
            announce("Scan complete.", .polite)
            outcome = BodyScanOutcome(kind: .complete, states: states, result: result)
            await close(abort: false)
        } catch {
            switch error {
            case .cancelled:
                await close(abort: true)
                outcome = BodyScanOutcome(kind: .cancelled, states: states)
            case .failed(let failure):
                enter(.failed, BodyScanScreens.failed(failure, motion: motion))
                cue(.error)
                announce("\(failure.message) \(failure.tip)", .assertive)
                await close(abort: false)
                outcome = BodyScanOutcome(kind: .failed, states: states, failure: failure)
            }
        }
        outcome.mirror = chosenMirror
        post.finish()
        return outcome
    }

    // MARK: the scan, step by step

    private func scan() async throws(ScanStop) -> ScanResult {
        let device = try await findMirror()
        try await connect(to: device)

        enter(.waitForScale, BodyScanScreens.waitForScale())
        try await wait(in: .waitForScale, deadlines.scalePresent) { [unowned self] _ in scale?.present == true ? .done : .keepWaiting }

        try await preflight()
        try await alignAndConfirm()

        try await start(.initialize(heightMillimetres: configuration.heightMillimetres, units: configuration.units), in: .confirmAlignment)
        try await start(.scanToken(configuration.makeScanToken()), in: .confirmAlignment)
        // The mirror's own signal decides whether there is a warm-up to show.
        try await wait(in: .confirmAlignment, deadlines.warmingUp) { [unowned self] _ in
            [.warmingUp, .ready].contains(mirror?.state) ? .done : .keepWaiting
        }
        if mirror?.state == .warmingUp {
            enter(.warmingUp, BodyScanScreens.warmingUp())
            try await wait(in: .warmingUp, deadlines.warmingUp) { [unowned self] _ in mirror?.state == .ready ? .done : .keepWaiting }
        }

        try await stepOnAndCountDown()

        enter(.scanning, BodyScanScreens.scanning(progress: mirror?.progress ?? 0, motion: motion))
        cue(.mediumImpact)
        // Only real progress buys more time: a mirror repeating (or lowering) its percentage
        // must not hold the scan open for ever.
        var furthest = mirror?.progress ?? 0
        try await wait(in: .scanning, deadlines.scanning) { [unowned self] input in
            guard case .event(.scanState(let status)) = input else { return .keepWaiting }
            if status.state == .scanning {
                show(BodyScanScreens.scanning(progress: status.progress, motion: motion))
                guard status.progress > furthest else { return .keepWaiting }
                furthest = status.progress
                return .restartDeadline
            }
            return .done
        }
        if mirror?.state == .stepOff {
            enter(.stepOff, BodyScanScreens.stepOff())
            try await wait(in: .stepOff, deadlines.steppingOff) { [unowned self] _ in
                [.processing, .complete].contains(mirror?.state) ? .done : .keepWaiting
            }
        }
        if mirror?.state == .processing {
            enter(.processing, BodyScanScreens.processing(progress: mirror?.progress ?? 0, motion: motion))
            try await wait(in: .processing, deadlines.processing) { [unowned self] input in
                guard case .event(.scanState(let status)) = input else { return .keepWaiting }
                if status.state == .processing { show(BodyScanScreens.processing(progress: status.progress, motion: motion)) }
                return status.state == .complete ? .done : .keepWaiting
            }
        }
        guard mirror?.state == .complete else {
            throw .failed(failure(.mirrorError, "The mirror left the scan in an unexpected state (\((mirror?.state).map { "\($0)" } ?? "none")).",
                                  "Restart the mirror and try again.", state: states.last ?? .processing))
        }
        guard case .result(let result) = try required(await command(in: .processing, { link in .result(try await link.readResult()) }), in: .processing)
        else { throw .failed(failure(.mirrorError, "The mirror sent no result.", "Try again.", state: .processing)) }
        return result
    }

    private func findMirror() async throws(ScanStop) -> DiscoveredDevice {
        enter(.connecting, BodyScanScreens.lookingForMirror())
        let discovery = transport.discover()
        let post = post
        background.append(Task {
            do {
                for try await device in discovery { post.yield(.discovered(device)) }
            } catch {
                post.yield(.discoveryFailed("\(error)"))
            }
        })
        var found: [BLEAddress: DiscoveredDevice] = [:]
        var chosen: DiscoveredDevice?
        var window: Int?
        try await wait(in: .connecting, deadlines.findMirror) { [unowned self] input throws(ScanStop) in
            switch input {
            case .discovered(let device) where configuration.isMirror(device):
                if let wanted = configuration.mirrorAddress {
                    guard wanted.matches(device.address) else { return .keepWaiting }
                    chosen = device
                    return .done
                }
                found[device.address] = device
                if window == nil { window = schedule(after: configuration.discoveryWindow) }
                return .keepWaiting
            case .discovered(let device) where configuration.mirrorAddress?.matches(device.address) == true:
                // The address asked for answers, but not as a mirror (a scale's, say): said at
                // once instead of after the whole search (issue 27, item 17).
                let name = device.name.map { " (\($0))" } ?? ""
                throw .failed(failure(.notFound, "\(device.address)\(name) is not a body-scan mirror.",
                                      "Give the mirror's address, or leave it out to find the mirror nearby.", state: .connecting))
            case .timer(let id) where id == window:
                return .done
            case .discoveryFailed(let why):
                throw .failed(failure(.notFound, "Bluetooth scanning failed: \(why)", "Check the Bluetooth controller, then try again.", state: .connecting))
            default:
                return .keepWaiting
            }
        }
        for task in background { task.cancel() }
        background.removeAll()
        if let chosen { return chosen }
        let mirrors = found.values.sorted { ($0.rssi, $1.address.description) > ($1.rssi, $0.address.description) }
        guard let nearest = mirrors.first else {
            throw .failed(failure(.notFound, "No mirror answered.", "Switch the mirror on and try again.", state: .connecting))
        }
        if mirrors.count == 1 || configuration.autoAnswer { return nearest }

        enter(.selectMirror, BodyScanScreens.pickMirror(mirrors))
        var picked: DiscoveredDevice?
        try await wait(in: .selectMirror, deadlines.pickMirror, for: "your choice") { input in
            if case .user(.pick(let address)) = input, let device = found[address] {
                picked = device
                return .done
            }
            return .keepWaiting
        }
        guard let picked else { throw .cancelled }
        return picked
    }

    private func connect(to device: DiscoveredDevice) async throws(ScanStop) {
        chosenMirror = device.address
        let state = states.last ?? .connecting
        show(BodyScanScreens.connecting(to: device.name ?? device.address.description))
        let transport = transport
        let reply = await run(in: state, deadlines.connect) { .connection(try await transport.connect(to: device)) }
        switch reply {
        case .success(.connection(let connection)):
            link = connection
            let post = post
            background.append(Task {
                for await event in connection.events { post.yield(.event(event)) }
            })
        case .failure(.stop(let stop)):
            throw stop
        case .failure(.scale(let error)):
            throw .failed(failure(.disconnected, "Could not connect to \(device.name ?? device.address.description): \(error).",
                                  "Move closer to the mirror and try again.", state: state))
        default:
            throw .failed(failure(.disconnected, "Could not connect.", "Try again.", state: state))
        }
    }

    private func preflight() async throws(ScanStop) {
        enter(.preflight, BodyScanScreens.preflight())
        guard case .info(let info) = try required(await command(in: .preflight, { link in .info(try await link.readInfo()) }), in: .preflight)
        else { return }
        if info.protocolVersion != 1 {
            throw .failed(failure(.preflight, "This mirror speaks protocol version \(info.protocolVersion); hwprobe knows version 1.",
                                  "Update hwprobe or the mirror's software.", state: .preflight))
        }
        if let battery = info.batteryPercent, battery < 15 {
            throw .failed(failure(.preflight, "The mirror's battery is at \(battery) %.", "Plug the mirror in, then try again.", state: .preflight))
        }
        if scale?.level == false {
            throw .failed(failure(.preflight, "The scale isn't level.", "Put the scale on a flat, hard floor, then try again.", state: .preflight))
        }
    }

    private func alignAndConfirm() async throws(ScanStop) {
        var mustSeeFreshAlignment = false
        while true {
            enter(.alignScale, BodyScanScreens.alignScale(alignment))
            if mustSeeFreshAlignment {
                try await waitForSettledAlignment()
            } else if alignment?.aligned != true {
                try await wait(in: .alignScale, deadlines.aligned) { [unowned self] input in
                    guard case .event(.alignment(let reading)) = input else { return .keepWaiting }
                    show(BodyScanScreens.alignScale(reading))
                    return reading.aligned ? .done : .keepWaiting
                }
            }
            mustSeeFreshAlignment = true
            enter(.confirmAlignment, BodyScanScreens.confirmAlignment())
            var confirmed = configuration.autoAnswer
            if !confirmed {
                try await wait(in: .confirmAlignment, deadlines.confirm, for: "your answer") { input in
                    switch input {
                    case .user(.confirm): confirmed = true; return .done
                    case .user(.realign): return .done
                    case .event(.alignment(let reading)) where !reading.aligned: return .done
                    default: return .keepWaiting
                    }
                }
            }
            guard confirmed else { continue }
            switch try await command(in: .confirmAlignment, { link in try await link.send(.confirmAlignment); return .none }) {
            case .success: return
            case .failure(.refused(_, .notAligned)): continue // the scale moved after all
            case .failure(let error): throw .failed(refusal(error, in: .confirmAlignment))
            }
        }
    }

    /// After Re-align: the scale must be lined up and left alone. A mirror notifies alignment only
    /// when it changes, so "aligned, and no newer reading for a moment" is the signal that the
    /// person is done, whether they moved the scale or found it already square.
    private func waitForSettledAlignment() async throws(ScanStop) {
        var settle: Int?
        if alignment?.aligned == true { settle = schedule(after: configuration.realignSettle) }
        defer { if let settle { cancelTimer(settle) } }
        try await wait(in: .alignScale, deadlines.aligned) { [unowned self] input in
            switch input {
            case .event(.alignment(let reading)):
                show(BodyScanScreens.alignScale(reading))
                if let pending = settle { cancelTimer(pending) }
                settle = reading.aligned ? schedule(after: configuration.realignSettle) : nil
                return .keepWaiting
            case .timer(let id) where id == settle:
                return .done
            default:
                return .keepWaiting
            }
        }
    }

    /// `init` and `scanToken`: refused writes end the attempt.
    private func start(_ command: MirrorCommand, in state: BodyScanState) async throws(ScanStop) {
        if case .failure(let error) = try await self.command(in: state, { link in try await link.send(command); return .none }) {
            throw .failed(refusal(error, in: state))
        }
    }

    private func stepOnAndCountDown() async throws(ScanStop) {
        while true {
            enter(.phoneDown, BodyScanScreens.phoneDown(scale))
            try await wait(in: .phoneDown, deadlines.onScaleAndStable) { [unowned self] input in
                if case .event(.scale) = input { show(BodyScanScreens.phoneDown(scale)) }
                return scale?.occupied == true && scale?.stable == true ? .done : .keepWaiting
            }
            enter(.countdown, BodyScanScreens.countdown(3, motion: motion))
            var steppedOff = false
            for number in [3, 2, 1] {
                if number != 3 { show(BodyScanScreens.countdown(number, motion: motion)) }
                cue(.selection)
                let tick = schedule(after: .seconds(1))
                try await wait(in: .countdown, nil) { [unowned self] input in
                    if case .timer(tick) = input { return .done }
                    if scale?.occupied == false { steppedOff = true; return .done }
                    return .keepWaiting
                }
                if steppedOff { break }
            }
            if steppedOff { continue }
            if case .failure(let error) = try await command(in: .countdown, { link in try await link.send(.startScan); return .none }) {
                throw .failed(refusal(error, in: .countdown))
            }
            // Scanning is shown on the mirror's word, not on ours.
            try await wait(in: .countdown, deadlines.scanning) { [unowned self] _ in
                mirror?.state == .scanning || [.stepOff, .processing, .complete].contains(mirror?.state) ? .done : .keepWaiting
            }
            return
        }
    }

    // MARK: waiting

    /// Handles inputs until `handle` says done. Disconnection, a mirror error, the person
    /// cancelling and this wait's deadline end the attempt from any wait.
    private func wait(in state: BodyScanState, _ deadline: Deadline?, for words: String? = nil,
                      _ handle: (ScanInput) throws(ScanStop) -> ScanWaitStep) async throws(ScanStop) {
        var warnTimer: Int?
        var failTimer: Int?
        func arm() {
            for id in [warnTimer, failTimer].compactMap({ $0 }) { cancelTimer(id) }
            if let deadline {
                warnTimer = schedule(after: deadline.warning)
                failTimer = schedule(after: deadline.failure)
                output.yield(.event(.waiting(for: words ?? Self.waitingWords(state), limit: deadline.failure)))
            }
        }
        arm()
        defer { for id in [warnTimer, failTimer].compactMap({ $0 }) { cancelTimer(id) } }
        // Facts already known may satisfy the wait at once.
        if try handle(.probe) == .done { return }
        while true {
            let input = await next()
            switch input {
            case .timer(let id) where id == warnTimer:
                warn(state)
                continue
            case .timer(let id) where id == failTimer:
                throw .failed(timedOut(state))
            case .done:
                continue // a late answer to a command that already timed out
            default:
                break
            }
            try absorb(input, in: state)
            switch try handle(input) {
            case .done: return
            case .restartDeadline: arm()
            case .keepWaiting: break
            }
        }
    }

    /// Runs one command against the mirror with the command deadline; events that arrive
    /// meanwhile are kept for the next wait.
    private func command(in state: BodyScanState,
                         _ body: @escaping @Sendable (any ScaleConnection) async throws -> CommandReply)
        async throws(ScanStop) -> Result<CommandReply, ScaleError> {
        guard let connection = link else { throw .failed(failure(.disconnected, "Not connected to the mirror.", "Try again.", state: state)) }
        switch await run(in: state, deadlines.command, { try await body(connection) }) {
        case .success(let reply): return .success(reply)
        case .failure(.stop(let stop)): throw stop
        case .failure(.scale(.disconnected(let reason))):
            link = nil
            throw .failed(failure(.disconnected, "The mirror disconnected: \(reason).", "Check the mirror is on and close by, then try again.", state: state))
        case .failure(.scale(let error)): return .failure(error)
        }
    }

    /// A command whose refusal ends the attempt.
    private func required(_ result: Result<CommandReply, ScaleError>, in state: BodyScanState) throws(ScanStop) -> CommandReply {
        switch result {
        case .success(let reply): return reply
        case .failure(let error): throw .failed(refusal(error, in: state))
        }
    }

    /// Starts `body` and waits for its answer, keeping other inputs for later.
    private func run(in state: BodyScanState, _ deadline: Deadline,
                     _ body: @escaping @Sendable () async throws -> CommandReply) async -> Result<CommandReply, ScanCommandStop> {
        nextID += 1
        let id = nextID
        let post = post
        let task = Task {
            do {
                post.yield(.done(id, .success(try await body())))
            } catch let error as ScaleError {
                post.yield(.done(id, .failure(error)))
            } catch {
                post.yield(.done(id, .failure(.protocolViolation("\(error)"))))
            }
        }
        let failTimer = schedule(after: deadline.failure)
        defer { cancelTimer(failTimer) }
        while true {
            // Straight from the inbox: what this loop puts aside must wait for the next wait.
            let input = await nextArrival()
            switch input {
            case .done(id, let result):
                return result.mapError { .scale($0) }
            case .done:
                continue
            case .timer(failTimer):
                task.cancel()
                return .failure(.stop(.failed(timedOut(state, what: "the mirror to answer"))))
            case .timer:
                pending.append(input)
            case .user(.cancel):
                task.cancel()
                return .failure(.stop(.cancelled))
            case .event(.disconnected), .event(.scanState):
                do { try absorbFatal(input, in: state) } catch { task.cancel(); return .failure(.stop(error)) }
                pending.append(input)
            default:
                pending.append(input)
            }
        }
    }

    /// The next input for a wait: first those kept while a command was outstanding.
    private func next() async -> ScanInput {
        if !pending.isEmpty { return pending.removeFirst() }
        return await nextArrival()
    }

    /// The next input from the inbox itself. The inbox never finishes while an attempt runs
    /// (the attempt holds `post`), so the fallback is never used.
    private func nextArrival() async -> ScanInput {
        await inbox.next() ?? .user(.cancel)
    }

    /// Keeps the mirror's latest facts and stops on the ones that end any wait.
    private func absorb(_ input: ScanInput, in state: BodyScanState) throws(ScanStop) {
        try absorbFatal(input, in: state)
        switch input {
        case .event(.scale(let status)): scale = status
        case .event(.alignment(let reading)): alignment = reading
        case .event(.scanState(let status)): mirror = status
        case .user(.cancel): throw .cancelled
        default: break
        }
    }

    private func absorbFatal(_ input: ScanInput, in state: BodyScanState) throws(ScanStop) {
        switch input {
        case .event(.disconnected(let reason)):
            link = nil
            throw .failed(failure(.disconnected, "The mirror disconnected: \(reason).", "Check the mirror is on and close by, then try again.", state: state))
        case .event(.scanState(let status)) where status.state == .error:
            let code = status.error ?? .unknown(0xFF)
            let words = BodyScanScreens.tip(for: code)
            throw .failed(BodyScanFailure(reason: .mirrorError, code: code.code, message: words.message, tip: words.tip, state: state))
        default:
            break
        }
    }

    // MARK: timers

    private func schedule(after delay: Duration) -> Int {
        nextID += 1
        let id = nextID
        let post = post
        let clock = clock
        timers[id] = Task {
            guard (try? await clock.sleep(for: delay)) != nil else { return }
            post.yield(.timer(id))
        }
        return id
    }

    private func cancelTimer(_ id: Int) {
        timers.removeValue(forKey: id)?.cancel()
    }

    // MARK: output

    /// The event goes before the screen: a presenter that clears what the last state waited for
    /// on `.entered` then never draws the new screen with the old wait's countdown on it.
    private func enter(_ state: BodyScanState, _ screen: Screen) {
        states.append(state)
        slowHint = nil
        flow.entered(state)
        output.yield(.event(.entered(state)))
        show(screen)
    }

    private func show(_ screen: Screen) {
        drawn = screen
        var shown = screen
        if let slowHint {
            // Beside the state's own footer (the alignment tip), not instead of it.
            shown.footer = Footer([screen.footer?.text, slowHint].compactMap { $0 }.joined(separator: " "), tone: .warning)
            shown.motion = nil
        }
        guard shown != self.screen else { return }
        self.screen = shown
        output.yield(.screen(shown))
    }

    private func warn(_ state: BodyScanState) {
        guard let drawn else { return }
        slowHint = BodyScanScreens.slowHint(state)
        show(drawn)
        cue(.warning)
        announce(BodyScanScreens.slowHint(state), .polite)
    }

    private func cue(_ cue: HapticCue) { output.yield(.cue(cue)) }

    private func announce(_ text: String, _ priority: Announcement.Priority) {
        output.yield(.announcement(Announcement(text, priority: priority)))
    }

    // MARK: failures

    func failure(_ reason: BodyScanFailure.Reason, _ message: String, _ tip: String, state: BodyScanState) -> BodyScanFailure {
        BodyScanFailure(reason: reason, message: message, tip: tip, state: state)
    }

    func timedOut(_ state: BodyScanState, what: String? = nil) -> BodyScanFailure {
        let stateWords = Self.waitingWords(state)
        if state == .connecting && what == nil {
            return failure(.notFound, "Nothing that looks like a body-scan mirror answered.", "Switch the mirror on, move closer and try again.", state: state)
        }
        return failure(.timedOut, "Gave up waiting for \(what ?? stateWords).", "Check the mirror and the scale, then try again.", state: state)
    }

    /// What a state waits for, in words that follow "waiting for".
    static func waitingWords(_ state: BodyScanState) -> String {
        switch state {
        case .connecting: "a mirror"
        case .selectMirror: "a mirror to be chosen"
        case .waitForScale: "the scale"
        case .preflight: "the mirror's checks"
        case .alignScale: "the scale to be lined up"
        case .confirmAlignment: "the mirror to start"
        case .warmingUp: "the sensors to warm up"
        case .phoneDown: "someone to stand still on the scale"
        case .countdown, .scanning: "the scan to progress"
        case .stepOff: "the scale to be stepped off"
        case .processing: "the model to be built"
        case .complete, .failed: "the mirror"
        }
    }

    func refusal(_ error: ScaleError, in state: BodyScanState) -> BodyScanFailure {
        if case .disconnected(let reason) = error {
            return failure(.disconnected, "The mirror disconnected: \(reason).", "Check the mirror is on and close by, then try again.", state: state)
        }
        return failure(.mirrorError, "The mirror refused: \(error).", "Restart the mirror and try again.", state: state)
    }

    /// Leaves the mirror idle: abort when the person cancelled, then disconnect; stops every task.
    private func close(abort: Bool) async {
        for task in background { task.cancel() }
        for task in timers.values { task.cancel() }
        background.removeAll()
        timers.removeAll()
        guard let link else { return }
        self.link = nil
        if abort {
            _ = await run(in: states.last ?? .connecting, deadlines.command) {
                try await link.send(.abort)
                return .none
            }
        }
        await link.disconnect()
    }
}

/// A command's failure: either the device said no (the caller decides), or the attempt must stop.
enum ScanCommandStop: Error {
    case scale(ScaleError)
    case stop(ScanStop)
}
