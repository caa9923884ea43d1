/// What a cassette (docs/cassette-format.md, version 1.1) holds of a camera: the camera's identity
/// as it reported itself, and the frames the decoding pipeline took from it with their times.
///
/// Plain values, so a test can build one or compare two. The pixels themselves are not here: they
/// are in the cassette's Y4M companion file (`frames`), which a replay reads one frame at a time,
/// so a long recording is never held in memory.
public struct CameraCassette: Hashable, Sendable {
    /// The identity the camera reported (QUERYCAP, ENUM_FMT, ENUM_FRAMESIZES): a replay reports the same.
    public var info: CameraInfo
    /// V4L2's bus info (`usb-0000:00:14.0-1`, `platform:vivid-000`), when the camera gave one.
    /// It identifies a port of a machine: `--anonymize` replaces it.
    public var busInfo: String?
    /// The companion file with the pixels, when any frame was recorded.
    public var frames: FrameFile?
    /// Each recorded frame's time (from the stream's start) and sequence number, in order.
    public var times: [FrameTime]

    public init(info: CameraInfo, busInfo: String? = nil, frames: FrameFile? = nil, times: [FrameTime] = []) {
        self.info = info
        self.busInfo = busInfo
        self.frames = frames
        self.times = times
    }

    /// The Y4M file beside the cassette: its name (in the cassette's directory, never a path),
    /// its exact size, and the picture size, all checked before a replay trusts it.
    public struct FrameFile: Hashable, Sendable {
        public var name: String
        public var bytes: Int
        public var width: Int
        public var height: Int

        public init(name: String, bytes: Int, width: Int, height: Int) {
            self.name = name
            self.bytes = bytes
            self.width = width
            self.height = height
        }
    }

    public struct FrameTime: Hashable, Sendable {
        public var at: Duration
        public var sequence: UInt64

        public init(at: Duration, sequence: UInt64) {
            self.at = at
            self.sequence = sequence
        }
    }

    /// What bounds a camera section (the reader's limits and the recorder's both).
    public enum Limits {
        /// Frames kept per camera: 30 frames a second for over half an hour.
        public static let frames = 65_536
        /// The companion file's largest size; recording stops keeping frames before it.
        public static let frameFileBytes = 1 << 30
        /// Formats, and sizes per format, in an identity.
        public static let formats = 256
        public static let sizesPerFormat = 256
        /// The longest card, driver or bus text (QUERYCAP's fields are 32 bytes; files name longer cards).
        public static let textBytes = 256
    }
}

/// What a cassette holds of a haptic pad: its identity, and every cue played on it with the timed
/// commands the cue became, each command at its offset from the cue's start. A replay plays
/// nothing; it checks that a cue now sends the same commands at the same offsets
/// (`PadCassette.differences`).
public struct PadCassette: Hashable, Sendable {
    /// The URI the pad was opened as (`evdev:/dev/input/event0`, `usb:045e:028e`, `log:`).
    public var uri: String
    /// The driver that drove it (`evdev-rumble`, `xbox360`, `log`).
    public var driver: String
    public var name: String
    /// A serial number or Bluetooth address the device reports (evdev's `uniq`): `--anonymize` replaces it.
    public var serial: String?
    public var cues: [Cue]

    public init(uri: String, driver: String, name: String, serial: String? = nil, cues: [Cue] = []) {
        self.uri = uri
        self.driver = driver
        self.name = name
        self.serial = serial
        self.cues = cues
    }

    public struct Cue: Hashable, Sendable {
        /// The cue's name (`HapticCue.rawValue`).
        public var name: String
        /// When it was asked for, from the recording's start.
        public var at: Duration
        public var commands: [TimedCommand]

        public init(name: String, at: Duration, commands: [TimedCommand] = []) {
            self.name = name
            self.at = at
            self.commands = commands
        }
    }

    public struct TimedCommand: Hashable, Sendable {
        /// From the cue's start: the pattern's timing, which is what a replay checks.
        public var at: Duration
        public var command: Command

        public init(at: Duration, command: Command) {
            self.at = at
            self.command = command
        }
    }

    /// The commands every pad understands (`RumbleActuator`).
    public enum Command: Hashable, Sendable, CustomStringConvertible {
        case rumble(RumbleLevel, Duration)
        case indicate(IndicatorColor?)
        case stop

        public var description: String {
            switch self {
            case .rumble(let level, let duration):
                "rumble strong \(level.strong) weak \(level.weak) for \(PadCassette.milliseconds(duration)) ms"
            case .indicate(let color?):
                "light \(PadCassette.hex(color.red))\(PadCassette.hex(color.green))\(PadCassette.hex(color.blue))"
            case .indicate(nil): "light back to rest"
            case .stop: "stop"
            }
        }
    }

    public enum Limits {
        public static let cues = 4096
        public static let commandsPerCue = 256
        public static let textBytes = 256
    }

    /// How far a command may be from its recorded offset and still match (hwprobe-cli.md: 5 ms).
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
        let micros = max(0, duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// `120` or `5.3`: milliseconds, one decimal when there is a fraction.
    static func milliseconds(_ duration: Duration) -> String {
        let tenths = (duration.components.seconds * 10_000 + duration.components.attoseconds / 100_000_000_000_000)
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
