import Dispatch
import Flows
import Foundation
import HAL

/// `hwprobe scan`: the body-scan flow against a mirror, drawn in the terminal or reported as the
/// contract's JSON object. The engine is the same one the demo runs, on a real or simulated transport.
struct ScanCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var transports: TransportFactory

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

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--hci")
        var configuration = BodyScanConfiguration()
        configuration.autoAnswer = invocation.has("--yes")
        configuration.motion = MotionSettings(reduceMotion: invocation.has("--reduce-motion"))
        let registry = registry
        configuration.isMirror = { registry.claim(.advertisement($0.advertisement))?.descriptor.kind == .mirror }
        if let height = invocation.value("--height-cm") {
            guard let cm = Int(height), (50...272).contains(cm) else {
                throw CLIFailure(kind: .usage, message: "--height-cm must be a whole number of centimetres from 50 to 272")
            }
            configuration.heightMillimetres = UInt16(cm * 10)
        }
        if let address = invocation.value("--mirror") {
            guard let parsed = BLEAddress(string: address) else {
                throw CLIFailure(kind: .usage, message: "--mirror must be an address like AA:BB:CC:DD:EE:FF")
            }
            configuration.mirrorAddress = parsed
        }
        let interactive = !configuration.autoAnswer
        if interactive && isatty(STDIN_FILENO) != 1 {
            throw CLIFailure(kind: .usage, message: "scan asks questions: run it in a terminal, or pass --yes to answer them itself")
        }
        let (transport, closeTransport) = try await transports.scaleTransport(for: uri, snoopPath: invocation.value("--btsnoop"))
        let flow = BodyScanFlow(transport: transport, clock: transports.clock(for: uri), configuration: configuration)
        let sink = try HapticSinks(registry: registry, console: console).open(option: invocation.value("--haptics"))
        let presenter = FlowPresenter(console: console, sink: sink, noColorFlag: invocation.has("--no-color"),
                                      verbose: invocation.has("--verbose"), json: invocation.wantsJSON)
        let presenting = Task { await presenter.present(flow.outputs) }
        let interrupt = CancelOnInterrupt { flow.cancel() }
        let answers = interactive ? TerminalAnswers.start(for: flow, presenter: presenter) : nil
        let outcome = await flow.run()
        flow.close()
        await presenting.value
        await presenter.finish()
        interrupt.stop()
        answers?.stop()
        await closeTransport()

        if invocation.wantsJSON {
            console.out(JSON.encode(Self.report(outcome)))
        }
        switch outcome.kind {
        case .complete: return 0
        case .failed: return 1
        case .cancelled: return 130
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

/// Ctrl-C cancels the flow (which then writes abort to a connected mirror) instead of killing it.
final class CancelOnInterrupt {
    private let source: any DispatchSourceSignal

    init(_ cancel: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: cancel)
        source.resume()
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}

/// Reads the person's answers from the terminal: a number picks a mirror (1 is the first listed), Enter confirms the
/// alignment, `r` lines it up again, `q` cancels.
final class TerminalAnswers {
    private let reader: Thread

    private init(reader: Thread) { self.reader = reader }

    static func start(for flow: BodyScanFlow, presenter: FlowPresenter) -> TerminalAnswers {
        let thread = Thread {
            while let line = readLine() {
                let answer = line.trimmingCharacters(in: .whitespaces).lowercased()
                if answer == "q" { flow.cancel(); continue }
                switch flow.state {
                case .confirmAlignment:
                    if answer == "r" { flow.realign() } else { flow.confirmAlignment() }
                case .selectMirror:
                    guard case .pickList(let items)? = presenter.lastScreen?.content, let number = Int(answer),
                          items.indices.contains(number - 1), let address = BLEAddress(string: items[number - 1].id) else { continue }
                    flow.pick(mirror: address)
                default:
                    break
                }
            }
        }
        thread.start()
        return TerminalAnswers(reader: thread)
    }

    func stop() { reader.cancel() }
}
