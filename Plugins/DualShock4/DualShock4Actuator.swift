import HAL
import Synchronization
import Transports

/// A DualShock 4 on USB as a `RumbleActuator`. It keeps the pad's current motors and light and
/// writes one full output report per change, because the report sets both at once.
public final class DualShock4Actuator: RumbleActuator {
    /// "DualShock 4 hidraw:/dev/hidrawN", for logs and the CLI's choice of pad.
    public let name: String
    /// The open node, for callers that need more than cues (reading input reports, say).
    public let device: HidrawDevice
    private let state = Mutex(DualShock4State())

    init(device: HidrawDevice) {
        self.device = device
        name = "DualShock 4 hidraw:\(device.path)"
    }

    /// What the pad was last told.
    public var current: DualShock4State { state.withLock { $0 } }

    /// Writes a report with the new motor levels and the current light; `duration` is ignored.
    public func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        try await apply { $0.motors = level }
    }

    /// Writes a report with the cue's colour (or the dim blue resting light for nil), motors unchanged.
    public func indicate(_ color: IndicatorColor?) async throws(HapticError) {
        try await apply { $0.light = color ?? DualShock4State.restingLight }
    }

    /// Writes a report with both motors off; the light bar keeps its colour.
    public func stop() async throws(HapticError) {
        try await apply { $0.motors = .off }
    }

    /// Closes the hidraw node; the pad keeps whatever it was last told.
    public func close() { device.close() }

    /// Commands arrive one at a time from `RumbleScheduler`, so the state written is the state kept.
    private func apply(_ change: (inout DualShock4State) -> Void) async throws(HapticError) {
        let report = state.withLock { state in
            change(&state)
            return DualShock4Report.output(state)
        }
        do {
            try await device.write(report)
        } catch {
            throw DualShock4Driver.hapticError(error)
        }
    }
}
