import HAL
import HALFakes
import Testing

/// How a condition fault is spent (issue 27, item 11): it holds for the session in which it is
/// felt and is gone from the next connection; a session that ends before its moment (as `check`'s
/// brief connections do) leaves it in store.
@Suite struct MirrorSimulationFaultTests {
    static func scalePresent(_ outputs: [MirrorSimulation.Output]) -> Bool {
        outputs.contains { if case .scale(let status) = $0 { status.present } else { false } }
    }

    @Test func noScaleIsSpentOnlyBySessionsThatLastPastItsMoment() {
        var mirror = MirrorSimulation(script: MirrorScript(fault: .scaleNeverPresent))
        let moment = MirrorSimulation.warnings.scalePresent
        // A brief session, ended before a client would have warned that the scale is late.
        _ = mirror.connect(at: .zero)
        #expect(!Self.scalePresent(mirror.advance(to: moment / 2)))
        mirror.disconnected()
        // The session in which it is felt: no scale, however long.
        _ = mirror.connect(at: .seconds(10))
        #expect(!Self.scalePresent(mirror.advance(to: .seconds(10) + moment * 4)))
        mirror.disconnected()
        // Try Again: the person switched the scale on.
        _ = mirror.connect(at: .seconds(30))
        #expect(Self.scalePresent(mirror.advance(to: .seconds(30) + moment)))
    }

    @Test func aLowBatteryReadIsChargedByTheNextSession() {
        var mirror = MirrorSimulation(script: MirrorScript(fault: .lowBattery(percent: 12)))
        _ = mirror.connect(at: .zero)
        #expect(mirror.readInfo().batteryPercent == 12)
        mirror.disconnected()
        _ = mirror.connect(at: .seconds(5))
        #expect(mirror.readInfo().batteryPercent == 82)
    }

    @Test func aLowBatteryNeverReadStaysLow() {
        var mirror = MirrorSimulation(script: MirrorScript(fault: .lowBattery(percent: 12)))
        _ = mirror.connect(at: .zero)
        mirror.disconnected()
        _ = mirror.connect(at: .seconds(5))
        #expect(mirror.readInfo().batteryPercent == 12)
    }

    /// A battery that is simply low (the script's own level, not a fault) never charges.
    @Test func aScriptedLowBatteryStaysLow() {
        var script = MirrorScript()
        script.info.batteryPercent = 5
        var mirror = MirrorSimulation(script: script)
        for session in 0..<3 {
            _ = mirror.connect(at: .seconds(Int64(session * 10)))
            #expect(mirror.readInfo().batteryPercent == 5)
            mirror.disconnected()
        }
    }
}
