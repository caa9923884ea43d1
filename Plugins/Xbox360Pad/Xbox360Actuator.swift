import HAL
import Transports

/// A wired Xbox 360 pad as a `RumbleActuator`: each command is one report on interface 0's
/// interrupt OUT endpoint (see `Xbox360Report`). The pad keeps running its motors and ring
/// animation until told otherwise, so nothing needs repeating between commands.
public final class Xbox360Actuator: RumbleActuator {
    /// "Xbox 360 pad usb:<bus.addr>", for logs and the CLI's choice of pad.
    public let name: String
    /// The claimed interface, for callers that need more than cues (a test reading what the pad sends back).
    public let pipe: USBInterruptPipe

    init(pipe: USBInterruptPipe) {
        self.pipe = pipe
        name = "Xbox 360 pad usb:\(pipe.name)"
    }

    /// Sends one rumble report (heavy motor = strong, light = weak); `duration` is ignored, the pad runs until told.
    public func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        try await send(Xbox360Report.rumble(level))
    }

    /// Plays the ring animation `Xbox360RingAnimation.showing` picks for `color`, or the resting ring for nil.
    public func indicate(_ color: IndicatorColor?) async throws(HapticError) {
        try await send(Xbox360Report.led(color.map(Xbox360RingAnimation.showing) ?? .resting))
    }

    /// Sends a rumble report with both motors off; the ring is left as it is.
    public func stop() async throws(HapticError) {
        try await send(Xbox360Report.rumble(.off))
    }

    /// Releases the pad (and hands it back to `xpad` if opening detached it).
    public func close() { pipe.close() }

    private func send(_ report: [UInt8]) async throws(HapticError) {
        do {
            try await pipe.write(report)
        } catch {
            throw Xbox360PadDriver.hapticError(error)
        }
    }
}
