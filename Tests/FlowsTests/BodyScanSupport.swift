import MirrorV1
import SerialTestSupport
import HAL
import HALFakes
import Synchronization
@testable import Flows


/// Collects everything a flow publishes, from `start()` on.
final class OutputLog: Sendable {
    private let items = Locked<[FlowOutput]>([])
    private let source: Locked<AsyncStream<FlowOutput>?>
    private let task = Locked<Task<Void, Never>?>(nil)

    init(_ outputs: AsyncStream<FlowOutput>) {
        source = Locked(outputs)
    }

    /// Starts collecting. Called on the serial executor, the collecting task is one of its jobs,
    /// so "settled" includes it; started anywhere else it could still be catching up on another
    /// thread when a test reads the log.
    func start() {
        guard let outputs = source.withLock({ current -> AsyncStream<FlowOutput>? in
            defer { current = nil }
            return current
        }) else { return }
        let items = items
        task.withLock { $0 = Task { for await item in outputs { items.withLock { $0.append(item) } } } }
    }

    var all: [FlowOutput] { items.value }
    var screens: [Screen] { all.compactMap { if case .screen(let s) = $0 { s } else { nil } } }
    var cues: [HapticCue] { all.compactMap { if case .cue(let c) = $0 { c } else { nil } } }
    var events: [FlowEvent] { all.compactMap { if case .event(let e) = $0 { e } else { nil } } }
    var announcements: [Announcement] { all.compactMap { if case .announcement(let a) = $0 { a } else { nil } } }
}

/// The real mirror driver's rules decide what is a mirror, as in hwprobe.
let registry = DriverRegistry(drivers: [MirrorV1Driver()])

/// Runs one attempt of the body scan against a fake mirror, moving the manual clock from deadline
/// to deadline until the attempt ends. `act` may answer for the person at any point.
struct ScanHarness {
    let clock: ManualClock
    let mirror: FakeMirror
    let flow: BodyScanFlow
    let log: OutputLog

    static func configuration(_ configure: (inout BodyScanConfiguration) -> Void) -> BodyScanConfiguration {
        var configuration = BodyScanConfiguration(recognizingMirrorsWith: registry)
        configuration.autoAnswer = true
        configuration.makeScanToken = { Array(repeating: 0x5A, count: 16) }
        configure(&configuration)
        return configuration
    }

    init(script: MirrorScript = MirrorScript(), configure: (inout BodyScanConfiguration) -> Void = { _ in }) {
        let clock = ManualClock()
        let mirror = FakeMirror(script: script, clock: clock)
        self.init(clock: clock, mirror: mirror, transport: FakeScaleTransport(peripherals: [.mirror(mirror)], clock: clock),
                  configuration: Self.configuration(configure))
    }

    init(clock: ManualClock, mirror: FakeMirror, transport: any ScaleTransport, configuration: BodyScanConfiguration) {
        self.clock = clock
        self.mirror = mirror
        flow = BodyScanFlow(transport: transport, clock: clock, configuration: configuration)
        log = OutputLog(flow.outputs)
    }

    /// Runs until the attempt ends; `act` is called whenever time stands still, with the flow's state.
    func run(limit: Int = 20_000, act: @escaping (BodyScanState?) -> Void = { _ in }) async -> BodyScanOutcome? {
        await withSerialExecutor {
            log.start()
            let result = Locked<BodyScanOutcome?>(nil)
            let flow = flow
            let task = Task { let outcome = await flow.run(); result.withLock { $0 = outcome } }
            for _ in 0..<limit {
                await settle()
                if let outcome = result.value {
                    await mirror.shutDown()
                    return outcome
                }
                let before = flow.state
                act(before)
                await settle()
                // Time moves only when the person has had their say in the state the flow is in.
                if flow.state == before { clock.advanceToNextDeadline() }
            }
            task.cancel()
            await mirror.shutDown()
            return result.value
        }
    }

    var elapsed: Duration { clock.now.offset }

    /// Lets every other job on the serial executor run until none is left: only then may time
    /// move, or a deadline could fire before the event that was about to meet it is handled.
    func settle() async { await settleSerialExecutor() }
}
