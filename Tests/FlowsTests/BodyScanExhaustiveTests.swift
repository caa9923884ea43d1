import HAL
import HALFakes
import Testing
@testable import Flows

/// Walks the engine through every fault the fake mirror can inject, in every phase, and checks
/// the promises of docs/flows.md §3: each run ends in a defined state within its deadlines, every
/// waiting state warns before it gives up, every state survives a disconnection, no state is a
/// dead end, and cues and announcements come exactly where they belong.
@Suite struct BodyScanExhaustiveTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var script: MirrorScript
        var expected: BodyScanFailure.Reason?
        var code: UInt8?
        var testDescription: String { name }
    }

    static var cases: [Case] {
        var cases: [Case] = []
        let waitingPhases: [MirrorPhase] = [.connected, .scalePresent, .aligned, .warmingUp, .ready, .scanning, .stepOff, .processing]
        for phase in waitingPhases {
            for delay in [Duration.milliseconds(100), .milliseconds(2100), .milliseconds(3700)] {
                cases.append(Case(name: "disconnect \(phase) +\(delay)", script: MirrorScript(fault: .disconnect(in: phase, after: delay)),
                                  expected: .disconnected))
            }
            for code in MirrorErrorCode.allKnown {
                cases.append(Case(name: "error \(code.code) in \(phase)", script: MirrorScript(fault: .error(code, in: phase, after: .milliseconds(100))),
                                  expected: .mirrorError, code: code.code))
            }
            cases.append(Case(name: "silence from \(phase)", script: MirrorScript(fault: .silence(in: phase)), expected: .timedOut))
        }
        cases.append(Case(name: "step off early", script: MirrorScript(fault: .stepOffEarly(atProgress: 40)), expected: .mirrorError, code: 4))
        cases.append(Case(name: "scale never present", script: MirrorScript(fault: .scaleNeverPresent), expected: .timedOut))
        cases.append(Case(name: "never aligned", script: MirrorScript(fault: .neverAligned), expected: .timedOut))
        cases.append(Case(name: "nobody steps on", script: MirrorScript(fault: .personNeverStepsOn), expected: .timedOut))
        cases.append(Case(name: "nobody steps off", script: MirrorScript(fault: .personNeverStepsOff), expected: .timedOut))
        var lowBattery = MirrorScript()
        lowBattery.info.batteryPercent = 12
        cases.append(Case(name: "battery 12 %", script: lowBattery, expected: .preflight))
        var tilted = MirrorScript()
        tilted.scaleLevel = false
        cases.append(Case(name: "scale not level", script: tilted, expected: .preflight))
        var future = MirrorScript()
        future.info.protocolVersion = 2
        cases.append(Case(name: "protocol version 2", script: future, expected: .preflight))
        var mains = MirrorScript()
        mains.info.batteryPercent = nil
        cases.append(Case(name: "on mains", script: mains, expected: nil))
        cases.append(Case(name: "good scan", script: MirrorScript(), expected: nil))
        return cases
    }

    static let goodRun = BodyScanFlowTests.goodRun

    /// The sum of every failure deadline a single run can meet: no run may take longer.
    static var worstCase: Duration {
        let d = BodyScanDeadlines()
        return [d.findMirror, d.connect, d.scalePresent, d.preflight, d.aligned, d.confirm, d.warmingUp, d.warmingUp,
                d.onScaleAndStable, d.scanning, d.scanning, d.steppingOff, d.processing].reduce(.zero) { $0 + $1.failure }
            + d.command.failure * 6 + .seconds(10)
    }

    @Test(arguments: cases)
    func everyFaultEndsInItsDefinedState(_ scenario: Case) async throws {
        let harness = ScanHarness(script: scenario.script)
        let outcome = try #require(await harness.run(), "the run never ended: a dead end")
        #expect(harness.elapsed <= Self.worstCase)

        // No dead ends: everything before the last state is the good path, in order.
        let path = outcome.states.dropLast()
        #expect(Array(path) == Array(Self.goodRun.prefix(path.count)), "\(outcome.states)")

        guard let expected = scenario.expected else {
            // A fault that strikes after the result is read (or none) lets the scan complete.
            #expect(outcome.kind == .complete, "\(outcome.failure?.description ?? "")")
            #expect(outcome.states == Self.goodRun)
            #expect(harness.log.cues.last == .success)
            return
        }
        if outcome.kind == .complete {
            // A fault in the last moments may lose the race with the result; that is a good end too.
            #expect(outcome.states == Self.goodRun)
            return
        }
        #expect(outcome.kind == .failed)
        #expect(outcome.states.last == .failed)
        let failure = try #require(outcome.failure)
        #expect(failure.reason == expected, "\(failure)")
        if let code = scenario.code { #expect(failure.code == code) }
        #expect(!failure.message.isEmpty && !failure.tip.isEmpty)

        // Cues: the error cue ends a failure; a timeout is always warned about first.
        #expect(harness.log.cues.last == .error)
        #expect(harness.log.cues.filter { $0 == .success }.isEmpty)
        let assertive = harness.log.announcements.filter { $0.priority == .assertive }
        #expect(assertive.count == 1)
        if expected == .timedOut {
            #expect(harness.log.cues.contains(.warning))
            let beforeFailure = harness.log.screens.dropLast().last
            #expect(beforeFailure?.footer?.tone == .warning, "\(String(describing: beforeFailure))")
        }
        // The failed screen lets the person retry.
        let last = try #require(harness.log.screens.last)
        #expect(last.content == .actions([ScreenAction(id: "retry", title: "Try Again", role: .primary), ScreenAction(id: "done", title: "Done")]))
    }

    /// Disconnection is handled in every state that has a link.
    @Test func disconnectionIsHandledInEveryConnectedState() async throws {
        var seen: Set<BodyScanState> = []
        for scenario in Self.cases where scenario.expected == .disconnected {
            let harness = ScanHarness(script: scenario.script)
            let outcome = try #require(await harness.run())
            if let state = outcome.failure?.state, outcome.failure?.reason == .disconnected { seen.insert(state) }
        }
        // A person who has not answered yet: the link drops while the flow waits for the confirmation.
        let waiting = ScanHarness(script: MirrorScript(fault: .disconnect(in: .aligned, after: .seconds(2)))) { $0.autoAnswer = false }
        let outcome = try #require(await waiting.run())
        if let state = outcome.failure?.state, outcome.failure?.reason == .disconnected { seen.insert(state) }
        let connected: Set<BodyScanState> = [.waitForScale, .alignScale, .confirmAlignment, .warmingUp, .phoneDown, .countdown,
                                             .scanning, .stepOff, .processing]
        #expect(connected.isSubset(of: seen), "not covered: \(connected.subtracting(seen))")
    }

    /// Every waiting state times out on its own (with a warning first) when the mirror falls silent there.
    @Test func everyWaitingStateHasADeadline() async throws {
        var timedOutIn: Set<BodyScanState> = []
        for scenario in Self.cases where scenario.expected == .timedOut {
            let harness = ScanHarness(script: scenario.script)
            let outcome = try #require(await harness.run())
            if outcome.failure?.reason == .timedOut, let state = outcome.failure?.state { timedOutIn.insert(state) }
        }
        // The remaining waits (finding, picking, confirming) are covered in BodyScanFlowTests.
        let waits: Set<BodyScanState> = [.waitForScale, .alignScale, .confirmAlignment, .warmingUp, .phoneDown, .scanning, .stepOff, .processing]
        #expect(waits.isSubset(of: timedOutIn), "no deadline seen in: \(waits.subtracting(timedOutIn))")
    }
}
