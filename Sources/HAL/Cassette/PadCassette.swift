/// What a cassette holds of a haptic pad: its identity, and every cue played on it with the timed
/// commands the cue became, each command at its offset from the cue's start. A replay plays
/// nothing; it checks that a cue now sends the same commands at the same offsets
/// (`PadCassette.differences`).
public struct PadCassette: Hashable, Sendable {
    /// The URI the pad was opened as (`evdev:/dev/input/event0`, `usb:045e:028e`, `log:`).
    public var uri: String
    /// The driver that drove it (`evdev-rumble`, `xbox360`, `log`).
    public var driver: String
    /// The name the device gave itself, shown when the replay is reported.
    public var name: String
    /// A serial number or Bluetooth address the device reports (evdev's `uniq`): `--anonymize` replaces it.
    public var serial: String?
    /// Every cue played while recording, in the order they were asked for.
    public var cues: [Cue]

    /// Builds a pad section; an empty `cues` is a recording in which nothing was played yet.
    public init(uri: String, driver: String, name: String, serial: String? = nil, cues: [Cue] = []) {
        self.uri = uri
        self.driver = driver
        self.name = name
        self.serial = serial
        self.cues = cues
    }

    /// One cue as it was played: its name, when, and the commands the pad was sent for it.
    public struct Cue: Hashable, Sendable {
        /// The cue's name (`HapticCue.rawValue`).
        public var name: String
        /// When it was asked for, from the recording's start.
        public var at: Duration
        /// The commands the cue turned into, in the order they were sent.
        public var commands: [TimedCommand]

        /// Builds a cue; commands are appended as the scheduler sends them.
        public init(name: String, at: Duration, commands: [TimedCommand] = []) {
            self.name = name
            self.at = at
            self.commands = commands
        }
    }

    /// One command sent to the pad and when, relative to the start of its cue.
    public struct TimedCommand: Hashable, Sendable {
        /// From the cue's start: the pattern's timing, which is what a replay checks.
        public var at: Duration
        /// What the pad was told to do.
        public var command: Command

        /// Builds a timed command.
        public init(at: Duration, command: Command) {
            self.at = at
            self.command = command
        }
    }

    /// The commands every pad understands (`RumbleActuator`).
    public typealias Command = ActuatorCommand

    /// Caps on what a pad section may hold, so a damaged or hostile cassette cannot exhaust memory.
    public enum Limits {
        /// Most cues on one pad: the recorder counts later ones as dropped, the reader refuses more.
        public static let cues = 4096
        /// Most commands in one cue, handled the same way: dropped when recording, refused when reading.
        public static let commandsPerCue = 256
        /// Longest text for a pad section's fields, in UTF-8 bytes; the same 256 as the camera sections.
        public static let textBytes = 256
    }

    /// How far a command may be from its recorded offset and still match (docs/cli.md: 5 ms).
    public static let tolerance: Duration = .milliseconds(5)

    /// How `seen` differs from this recording, one readable line per difference (empty when the
    /// same commands came at the same offsets within `tolerance`); `nil` tolerance ignores timing
    /// (a test on a manual clock that does not care). Cues are compared in order, by name, and
    /// each cue's commands in order: which command, what was expected, what came, at what offset.
    public func differences(seen: [Cue], tolerance: Duration? = PadCassette.tolerance) -> [String] {
        var lines: [String] = []
        for index in 0..<max(cues.count, seen.count) {
            guard index < seen.count else {
                lines.append("cue \(index + 1): expected \(cues[index].name), but no more cues were played (\(seen.count) of \(cues.count))")
                break
            }
            guard index < cues.count else {
                lines.append("cue \(index + 1): \(seen[index].name) was played, but the recording has only \(cues.count) cues")
                break
            }
            let want = cues[index], got = seen[index]
            guard want.name == got.name else {
                lines.append("cue \(index + 1): expected \(want.name), saw \(got.name)")
                continue
            }
            for step in 0..<max(want.commands.count, got.commands.count) {
                let label = "cue \(index + 1) (\(want.name)), command \(step + 1)"
                guard step < got.commands.count else {
                    let missing = want.commands[step]
                    lines.append("\(label): expected \(missing.command) at \(Self.seconds(missing.at)) s, but the cue sent nothing more")
                    break
                }
                guard step < want.commands.count else {
                    let extra = got.commands[step]
                    lines.append("\(label): saw \(extra.command) at \(Self.seconds(extra.at)) s, which the recording does not have")
                    break
                }
                let expected = want.commands[step], actual = got.commands[step]
                let off = actual.at > expected.at ? actual.at - expected.at : expected.at - actual.at
                if expected.command != actual.command {
                    lines.append("\(label): expected \(expected.command) at \(Self.seconds(expected.at)) s, saw \(actual.command) at \(Self.seconds(actual.at)) s")
                } else if let tolerance, off > tolerance {
                    lines.append("\(label): \(expected.command) expected at \(Self.seconds(expected.at)) s, seen at \(Self.seconds(actual.at)) s "
                                 + "(\(Self.milliseconds(off)) ms off, more than \(Self.milliseconds(tolerance)) ms)")
                }
            }
        }
        return lines
    }

    /// `0.140000`: seconds with six decimals, as the cassette writes them.
    static func seconds(_ duration: Duration) -> String {
        let micros = max(0, duration.wholeMicroseconds)
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// `120` or `5.3`: milliseconds, one decimal when there is a fraction.
    static func milliseconds(_ duration: Duration) -> String {
        let tenths = (duration.components.seconds * 10_000 + duration.components.attoseconds / 100_000_000_000_000)
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
