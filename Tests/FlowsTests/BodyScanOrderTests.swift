import HAL
import HALFakes
import Testing
@testable import Flows

/// The mirror's independent signals may arrive in any order; the flow must reach the same end.
/// A hand-driven link plays each order: the scale before or after the alignment, the mirror with
/// or without a warm-up, the person on the scale before or after the mirror is ready.
@Suite struct BodyScanOrderTests {
    struct Order: Sendable, CustomTestStringConvertible {
        var alignmentFirst: Bool
        var warmUp: Bool
        var personFirst: Bool
        var testDescription: String {
            "\(alignmentFirst ? "aligned→scale" : "scale→aligned"), \(warmUp ? "warm-up" : "no warm-up"), \(personFirst ? "on scale→ready" : "ready→on scale")"
        }
    }

    static let orders: [Order] = [false, true].flatMap { a in [false, true].flatMap { w in [false, true].map { p in
        Order(alignmentFirst: a, warmUp: w, personFirst: p)
    } } }

    @Test(arguments: orders)
    func everyOrderCompletes(_ order: Order) async throws {
        let clock = ManualClock()
        let script = MirrorScript()
        let link = FakeScaleConnection(device: script.discoveredDevice, info: script.info)
        let onScale = ScaleStatus(present: true, occupied: true, stable: true, kilograms: 70)
        link.setResult { script.result }
        link.setResponder { command throws(ScaleError) in
            switch command {
            case .scanToken:
                if order.personFirst { link.emit(.scale(onScale)) }
                if order.warmUp { link.emit(.scanState(MirrorScanStatus(state: .warmingUp))) }
                link.emit(.scanState(MirrorScanStatus(state: .ready)))
            case .startScan:
                for progress in stride(from: UInt8(0), through: 95, by: 5) {
                    link.emit(.scanState(MirrorScanStatus(state: .scanning, progress: progress)))
                }
                link.emit(.scanState(MirrorScanStatus(state: .stepOff)))
            default:
                break
            }
        }
        let transport = FakeScaleTransport(peripherals: [.init(device: link.device) { link }], clock: clock)
        let harness = ScanHarness(clock: clock, mirror: FakeMirror(clock: clock), transport: transport,
                                  configuration: ScanHarness.configuration { _ in })
        let outcome = try #require(await harness.run(limit: 500) { state in
            switch state {
            case .waitForScale:
                let aligned = ScaleEvent.alignment(Alignment(angleDegrees: 1, distanceCm: 52, aligned: true))
                let present = ScaleEvent.scale(ScaleStatus(present: true))
                for event in order.alignmentFirst ? [aligned, present] : [present, aligned] { link.emit(event) }
            case .phoneDown:
                if !order.personFirst { link.emit(.scale(onScale)) }
            case .stepOff:
                link.emit(.scale(ScaleStatus(present: true)))
                link.emit(.scanState(MirrorScanStatus(state: .processing, progress: 50)))
                link.emit(.scanState(MirrorScanStatus(state: .complete)))
            default:
                break
            }
        })
        #expect(outcome.kind == .complete, "\(outcome.failure?.description ?? "")")
        var expected = BodyScanFlowTests.goodRun
        if !order.warmUp { expected.removeAll { $0 == .warmingUp } }
        #expect(outcome.states == expected)
        #expect(link.sentCommands.map(\.name) == ["confirmAlignment", "init", "scanToken", "startScan"])
        #expect(harness.log.cues == [.selection, .selection, .selection, .mediumImpact, .success])
    }
}
