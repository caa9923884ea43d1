import Flows
import Foundation
import HAL
import LinuxIO

/// `hwprobe scan`: the body-scan flow against a mirror, drawn in the terminal or reported as the
/// contract's JSON object. The engine is the same one the demo runs, on a real or simulated transport.
///
/// At a terminal the person answers with keys (pick a mirror, Confirm or Re-align), and the end
/// screens act: Try Again runs the flow again, Done exits. With `--yes` the flow answers itself.
struct ScanCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var transports: TransportFactory
    /// For tests: the keys a person presses on each screen, instead of a terminal's.
    var person: (@Sendable (Screen) -> [Key])?
    /// Where `--report` learns the mirror used, the result, and a failure the flow presented.
    var details: Locked<RunDetails>?

    struct Report: Encodable {
        struct Result: Encodable {
            var scanId: UInt32
            var weightKg: Double
            var bodyFatPercent: Double
            var pointCount: UInt32
        }
        struct Failure: Encodable {
            var reason: String
            var code: UInt8?
            var message: String
        }
        var outcome: String
        var states: [String]
        var result: Result?
        var failure: Failure?
    }

    private enum EndChoice: Sendable { case retry, done, cancel }

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--hci")
        var configuration = BodyScanConfiguration(recognizingMirrorsWith: registry)
        configuration.autoAnswer = invocation.has("--yes")
        configuration.motion = MotionSettings(reduceMotion: invocation.has("--reduce-motion"))
        if let height = invocation.value("--height-cm") {
            guard let cm = Int(height), (50...272).contains(cm) else {
                throw CLIFailure(kind: .usage, message: "--height-cm must be a whole number of centimetres from 50 to 272")
            }
            configuration.heightMillimetres = UInt16(cm * 10)
        }
        if let address = invocation.value("--mirror") {
            guard let parsed = BLEAddressFilter(string: address) else {
                throw CLIFailure(kind: .usage, message: "--mirror must be an address like AA:BB:CC:DD:EE:FF (optionally /public or /random)")
            }
            configuration.mirrorAddress = parsed
        }
        let interactive = !configuration.autoAnswer
        if interactive && !FileDescriptor.standardInput.isTerminal && person == nil {
            throw CLIFailure(kind: .usage, message: "scan asks questions: run it in a terminal, or pass --yes to answer them itself")
        }
        let sink = try HapticSinks(registry: registry, console: console, media: transports.media).open(option: invocation.value("--haptics"))
        let (transport, closeTransport) = try await transports.scaleTransport(for: uri, snoopPath: invocation.value("--btsnoop"))
        let flow = BodyScanFlow(transport: transport, clock: transports.clock(for: uri), configuration: configuration)
        let terminal = person == nil ? TerminalSession.forProcess(console: console, wantsKeys: interactive) : nil
        let presenter = FlowPresenter(console: console, sink: sink, noColorFlag: invocation.has("--no-color"),
                                      verbose: invocation.has("--verbose"), json: invocation.wantsJSON,
                                      interactive: interactive, terminal: terminal, person: person, clock: transports.clock(for: uri))
        let ending = AsyncStream.makeStream(of: EndChoice.self)
        presenter.setControls(.init(choose: { id in
            switch id {
            case BodyScanFlow.confirmActionID: flow.confirmAlignment()
            case BodyScanFlow.realignActionID: flow.realign()
            case BodyScanFlow.retryActionID: ending.continuation.yield(.retry)
            case BodyScanFlow.doneActionID: ending.continuation.yield(.done)
            default:
                if let address = BLEAddress(string: id) { flow.pick(mirror: address) }
            }
        }))
        let interrupt = SignalHandling.shared.onInterrupt {
            flow.cancel()
            ending.continuation.yield(.cancel)
        }
        presenter.start()
        let presenting = Task { await presenter.present(flow.outputs) }
        var choices = ending.stream.makeAsyncIterator()
        var outcome = await flow.run()
        var leftAtTheEnd = false
        // At a terminal the end screen waits for the person: Try Again or Done.
        while interactive, outcome.kind != .cancelled, SignalHandling.shared.interruption == nil {
            let choice = await choices.next() ?? .cancel
            if choice == .retry {
                outcome = await flow.run()
                continue
            }
            leftAtTheEnd = choice == .cancel
            break
        }
        flow.close()
        await presenting.value
        await presenter.finish()
        interrupt.end()
        await closeTransport()

        if invocation.wantsJSON {
            console.out(JSON.encode(Self.report(outcome)))
        }
        details?.withLock { Self.describe(outcome, into: &$0) }
        if outcome.kind == .cancelled || leftAtTheEnd {
            return SignalHandling.shared.interruption.map(SignalHandling.exitCode(for:)) ?? 130
        }
        return outcome.kind == .complete ? 0 : 1
    }

    /// The outcome as `--report` gives it: the mirror, the result's figures, the failure's kind
    /// (with the mirror's error code) and words.
    static func describe(_ outcome: BodyScanOutcome, into details: inout RunDetails) {
        if let mirror = outcome.mirror { details.set("peripheral", mirror.description) }
        if let result = outcome.result {
            details.set("scanId", String(result.scanID))
            details.set("weightKg", String(result.kilograms))
            details.set("bodyFatPercent", String(result.bodyFatPercent))
            details.set("pointCount", String(result.pointCount))
        }
        if let failure = outcome.failure {
            let kind = failure.code.map { "\(failure.reason.rawValue) \($0)" } ?? failure.reason.rawValue
            details.failure = (kind: kind, message: "\(failure.message) \(failure.tip) (state \(failure.state.rawValue))")
        }
    }

    static func report(_ outcome: BodyScanOutcome) -> Report {
        Report(outcome: outcome.kind.rawValue, states: outcome.states.map(\.rawValue),
               result: outcome.result.map {
                   .init(scanId: $0.scanID, weightKg: $0.kilograms, bodyFatPercent: $0.bodyFatPercent, pointCount: $0.pointCount)
               },
               failure: outcome.failure.map { .init(reason: $0.reason.rawValue, code: $0.code, message: "\($0.message) \($0.tip)") })
    }
}
