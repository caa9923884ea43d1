import HAL
import Synchronization

/// An actuator that writes down every command with the clock's time, so tests can check the
/// exact timed commands a cue becomes. It can be told to disappear after some commands.
public final class RecordingActuator<C: Clock>: RumbleActuator where C.Duration == Duration {
    /// The same commands a pad cassette records, so the two can be compared directly.
    public typealias Command = ActuatorCommand

    /// One command received and when.
    public struct Entry: Hashable, Sendable {
        /// The command, as the scheduler gave it.
        public var command: Command
        /// The clock's time when the command arrived.
        public var at: C.Instant
    }

    /// The name the scheduler and its errors report.
    public let name: String
    private let clock: C
    private let failAfter: Int?
    private let entries = Mutex<[Entry]>([])

    /// `failAfter`: every command after this many throws `.disappeared`.
    public init(name: String = "recording pad", clock: C, failAfter: Int? = nil) {
        self.name = name
        self.clock = clock
        self.failAfter = failAfter
    }

    /// Every accepted command with its time, in order.
    public var recorded: [Entry] { entries.withLock { $0 } }
    /// Just the commands, for comparing with an expected list.
    public var commands: [Command] { recorded.map(\.command) }

    /// Records a `.rumble` with the level and the scheduler's planned duration.
    public func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        try record(.rumble(level, duration))
    }

    /// Records an `.indicate`; nil is the return to the resting light.
    public func indicate(_ color: IndicatorColor?) async throws(HapticError) { try record(.indicate(color)) }
    /// Records a `.stop`.
    public func stop() async throws(HapticError) { try record(.stop) }

    private func record(_ command: Command) throws(HapticError) {
        let now = clock.now
        let accepted = entries.withLock { list -> Bool in
            if let failAfter, list.count >= failAfter { return false }
            list.append(Entry(command: command, at: now))
            return true
        }
        if !accepted { throw .disappeared(name) }
    }
}
