import TestKit
import Flows
import Foundation
import HAL
import MirrorV1
import PeerSupport
import Transports

/// Body scans against the bumble mirror peer, one random fault per run, each checked against
/// the outcome the flow must reach for that fault and within that fault's deadline.
struct ScanSoak {
    /// One injected fault and what the flow must end in.
    struct Fault {
        var label: String
        var command: [String: Any]?
        var expected: String
        /// The longest the run may take (real time), deadlines included.
        var bound: Duration
    }

    let speed: Double
    var random: SplitMix64

    /// The mirror's states with how long each lasts there (peer `T_*`, life seconds), and the
    /// flow deadline (life seconds) that covers a mirror falling silent in it.
    static let states: [(name: String, life: Double, silenceDeadline: Double)] = [
        ("warmingUp", 3.0, 30), ("ready", 2.7, 90), ("scanning", 5.0, 30), ("stepOff", 1.5, 30), ("processing", 3.0, 120),
    ]

    func real(_ lifeSeconds: Double) -> Duration { .milliseconds(Int64(lifeSeconds * 1000 / speed)) }

    mutating func nextFault() -> Fault {
        let base = real(25) + .seconds(10)  // a good scan, with room for a busy machine
        let state = Self.states.randomElement(using: &random) ?? Self.states[0]
        let early = Int.random(in: 0...Int(state.life * 500 / speed), using: &random)  // within the first half of the state
        switch Int.random(in: 0..<12, using: &random) {
        case 0:
            return Fault(label: "none", command: nil, expected: "complete", bound: base)
        case 1, 2:
            return Fault(label: "disconnect@\(state.name)",
                         command: ["fault": "disconnect", "state": state.name, "after_ms": early],
                         expected: "failed/disconnected", bound: base)
        case 3, 4:
            let code = [1, 2, 3, 5, 255].randomElement(using: &random) ?? 1
            return Fault(label: "error\(code)@\(state.name)",
                         command: ["fault": "error", "code": code, "state": state.name, "after_ms": early],
                         expected: "failed/mirrorError/\(code)", bound: base)
        case 5:
            let silent = Self.states.filter { $0.silenceDeadline <= 30 }.randomElement(using: &random) ?? Self.states[0]
            return Fault(label: "silence@\(silent.name)", command: ["fault": "silence", "state": silent.name],
                         expected: "failed/timedOut", bound: base + real(silent.silenceDeadline))
        case 6:
            // Shorter than a tenth of the state's deadline: the flow waits it out.
            let ms = Int(state.silenceDeadline * 100 / speed)
            return Fault(label: "stall@\(state.name)", command: ["fault": "stall", "state": state.name, "after_ms": early, "ms": ms],
                         expected: "complete", bound: base + .milliseconds(ms))
        case 7:
            let kind = ["truncated_att", "unknown_opcode", "short_value", "bad_state"].randomElement(using: &random) ?? "short_value"
            return Fault(label: "malformed:\(kind)@\(state.name)",
                         command: ["fault": "malformed", "kind": kind, "state": state.name, "after_ms": early],
                         expected: "complete", bound: base)
        case 8:
            // Inside the 10 s (life) command deadline: late answers are still answers.
            let ms = Int(10_000 * 0.3 / speed)
            return Fault(label: "delayWrites", command: ["fault": "delay_writes", "ms": ms, "count": Int.random(in: 1...3, using: &random)],
                         expected: "complete", bound: base + .milliseconds(3 * ms))
        case 9:
            let ms = Int(10_000 * 2 / speed)
            return Fault(label: "delayWritesPastDeadline", command: ["fault": "delay_writes", "ms": ms, "count": 1],
                         expected: "failed/timedOut", bound: base + real(10))
        case 10:
            return Fault(label: "stepOffEarly", command: ["fault": "step_off_early", "progress": Int.random(in: 10...90, using: &random)],
                         expected: "failed/mirrorError/4", bound: base)
        default:
            return Fault(label: "lowBattery", command: ["battery": 8], expected: "failed/preflight", bound: base)
        }
    }

    static func describe(_ outcome: BodyScanOutcome) -> String {
        switch outcome.kind {
        case .complete: return "complete"
        case .cancelled: return "cancelled"
        case .failed:
            guard let failure = outcome.failure else { return "failed/?" }
            return "failed/\(failure.reason.rawValue)" + (failure.reason == .mirrorError ? "/\(failure.code.map(String.init) ?? "?")" : "")
        }
    }

    struct Run {
        var fault: Fault
        var outcome: String
        var elapsed: Duration
        var leftovers: [String]
        /// Whether the armed fault took effect (the peer counts it); a fault whose moment never
        /// came (the mirror left that state first) leaves the run unfaulted.
        var struck: Bool
    }

    static func faultsApplied(_ peer: PeerProcess) async -> Int {
        let state = try? await peer.command(["cmd": "state"])
        return (state?["mirror"] as? [String: Any])?["faultsApplied"] as? Int ?? -1
    }

    /// One scan with `fault` armed; everything it opened is closed and checked before it returns.
    func run(_ fault: Fault, peer: PeerProcess, baseline: ProcessResources) async throws -> Run {
        let appliedBefore = await Self.faultsApplied(peer)
        if let command = fault.command {
            var request = command
            request["cmd"] = "mirror_fault"
            _ = try await peer.command(request)
        }
        let clock = ContinuousClock()
        let started = clock.now
        var configuration = BodyScanConfiguration(recognizingMirrorsWith: DriverRegistry(drivers: [MirrorV1Driver()]))
        configuration.autoAnswer = true
        configuration.mirrorAddress = BLEAddressFilter(peer.address)
        let flowClock = ScaledClock(speed: speed)
        var flowBox: WeakBox?
        var centralBox: WeakBox?
        let outcome: String
        do {
            let central = try await BLECentral.open(peer.tcp)
            centralBox = WeakBox(central.host)
            let flow = BodyScanFlow(transport: BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [MirrorV1Driver()])),
                                    clock: flowClock, configuration: configuration)
            flowBox = WeakBox(flow)
            let drain = Task { for await _ in flow.outputs {} }
            // A watchdog past the fault's own bound: a flow that never ends is a finding, not a hang.
            let limit = fault.bound + .seconds(10)
            let watchdog = Task {
                try await Task.sleep(for: limit)
                flow.cancel()
            }
            let result = await flow.run()
            watchdog.cancel()
            flow.close()
            await drain.value
            await central.close()
            outcome = Self.describe(result)
        } catch {
            outcome = "error: \(error)"
        }
        let elapsed = started.duration(to: clock.now)
        await peer.waitUntilIdle()
        let appliedAfter = await Self.faultsApplied(peer)
        let struck = fault.command == nil || appliedAfter > appliedBefore
        _ = try? await peer.command(["cmd": "mirror_fault", "fault": "clear"])
        let leftovers = await leftovers(since: baseline, objects: [("flow", flowBox), ("HCI host", centralBox)])
        return Run(fault: fault, outcome: outcome, elapsed: elapsed, leftovers: leftovers, struck: struck)
    }
}
