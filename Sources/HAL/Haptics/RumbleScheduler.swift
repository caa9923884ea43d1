/// Plays cues on a `RumbleActuator`: the one place where a pattern becomes timed device
/// commands, so every pad feels the same. A new cue cancels the one still playing (as game
/// pads' rumble APIs do): the old cue stops its motors and the new one starts at once.
///
/// Each cue runs as: `indicate(colour)` when the pattern has one, then one `rumble` per pulse at
/// the pulse's start (pauses are `rumble(.off)`), pulse starts measured from the cue's start so
/// they never drift, then `stop()` and `indicate(nil)`.
///
/// A device that disappears is reported once (the `play` that saw it throws `.disappeared`);
/// later cues return at once, so a flow carries on without haptics.
public actor RumbleScheduler<C: Clock>: HapticSink where C.Duration == Duration {
    /// The actuator's name, readable without waiting on the actor.
    public nonisolated let name: String
    private let actuator: any RumbleActuator
    private let clock: C
    private var current: Task<HapticError?, Never>?
    private var gone = false

    /// Plays on `actuator`, timing pulses on `clock` (a `ManualClock` in tests, the bench's clock otherwise).
    public init(_ actuator: any RumbleActuator, clock: C) {
        self.actuator = actuator
        self.clock = clock
        self.name = actuator.name
    }

    /// Cancels the cue still playing and plays this one; throws `.disappeared` once if the device went away.
    public func play(_ cue: HapticCue) async throws(HapticError) {
        // A caller cancelled before it got here was already superseded: it must not cancel its successor.
        if Task.isCancelled || gone { return }
        let previous = current
        previous?.cancel()
        let task = Task { [actuator, clock] in
            // The previous cue's stop goes out before this cue's first command.
            _ = await previous?.value
            if Task.isCancelled { return nil as HapticError? }
            return await Self.perform(cue.pattern, on: actuator, clock: clock)
        }
        current = task
        let failure = await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        if current == task { current = nil }
        guard let failure else { return }
        if case .disappeared = failure {
            if gone { return }
            gone = true
        }
        throw failure
    }

    /// Cuts the playing cue short (its motors stop) and closes the device; later cues are skipped.
    public func close() async {
        gone = true
        current?.cancel()
        _ = await current?.value
        actuator.close()
    }

    /// Whether the device has gone away (and cues are now silently skipped).
    public var hasDisappeared: Bool { gone }

    private static func perform(_ pattern: HapticPattern, on actuator: any RumbleActuator, clock: C) async -> HapticError? {
        do throws(HapticError) {
            if let color = pattern.indicator { try await actuator.indicate(color) }
            var deadline = clock.now
            for pulse in pattern.pulses {
                if Task.isCancelled { break }
                try await actuator.rumble(pulse.rumbleLevel, for: pulse.duration)
                deadline = deadline.advanced(by: pulse.duration)
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { break }
            }
            try await actuator.stop()
            if pattern.indicator != nil { try await actuator.indicate(nil) }
            return nil
        } catch {
            return error
        }
    }
}
