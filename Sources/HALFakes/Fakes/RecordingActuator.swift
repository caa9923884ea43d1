import HAL
import Synchronization

/// An actuator that writes down every command with the clock's time, so tests can check the
/// exact timed commands a cue becomes. It can be told to disappear after some commands.
public final class RecordingActuator<C: Clock>: RumbleActuator where C.Duration == Duration {
    public typealias Command = ActuatorCommand

    public struct Entry: Hashable, Sendable {
        public var command: Command
        public var at: C.Instant
    }

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

    public var recorded: [Entry] { entries.withLock { $0 } }
    public var commands: [Command] { recorded.map(\.command) }

    public func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        try record(.rumble(level, duration))
    }

    public func indicate(_ color: IndicatorColor?) async throws(HapticError) { try record(.indicate(color)) }
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
