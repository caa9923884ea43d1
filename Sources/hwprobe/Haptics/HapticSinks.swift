import HAL
import LinuxIO
import Transports

/// Opens the haptic sink a URI names: `log:` and `bell:` in the terminal, `usb:`, `hidraw:` and
/// `evdev:` through whichever linked pad driver claims the device. Every sink is a
/// `RumbleScheduler` over an actuator, so all of them play a cue the same way.
struct HapticSinks: Sendable {
    var registry: DriverRegistry
    var console: Console
    var input = InputProbe()
    /// Where `log:` writes: stdout for `hwprobe haptics`, stderr while a flow draws on stdout.
    var logToStandardOutput = false
    var options = HapticOpenOptions()
    /// `--record FILE` and `replay:FILE` for pads: every sink opened is recorded, or checked.
    var media: MediaCassettes?
    /// The clock cues are timed on (and recorded on) without `media`; with it, `media.hapticClock`.
    var clock: any Clock<Duration> = ContinuousClock()

    /// The sink a flow command's `--haptics URI` names, or none without the option.
    func open(option text: String?) throws(CLIFailure) -> (any HapticSink)? {
        guard let text else { return nil }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--haptics")
        guard uri.family == .haptics || uri.isReplay else {
            throw CLIFailure(kind: .usage, message: "--haptics \(uri) is not a haptic device: use usb:VID:PID, hidraw:PATH, evdev:PATH, log: or bell:")
        }
        return try open(uri)
    }

    func open(_ uri: DeviceURI) throws(CLIFailure) -> any HapticSink {
        let clock = media?.hapticClock ?? clock
        let schedule: (any RumbleActuator) -> any HapticSink = { Self.scheduler($0, clock: clock) }
        func recorded(_ actuator: any RumbleActuator, driver: String, name: String? = nil, serial: String? = nil) -> any HapticSink {
            guard let media else { return schedule(actuator) }
            let identity = PadCassette(uri: uri.description, driver: driver, name: name ?? actuator.name, serial: serial)
            return media.recording(pad: identity, clock: clock, actuator: actuator, open: schedule)
        }
        switch uri {
        case .log:
            let console = console, toOut = logToStandardOutput
            return recorded(Self.logActuator(clock: clock) { text in toOut ? console.out(text) : console.errLines(text) }, driver: "log")
        case .bell:
            let console = console
            return recorded(BellActuator { console.errControl("\u{07}") }, driver: "bell")
        case .usb, .hidraw, .evdev:
            let (driver, id) = try padDriver(for: uri)
            // The device's own name and serial, for a cassette's identity (only when recording).
            let (name, serial): (String?, String?) = switch (media?.recordPath, uri) {
            case (.some, .evdev(let path)): ((try? input.evdevDevice(at: path))?.name, InputProbe.uniq(ofEvdev: path))
            case (.some, .hidraw(let path)): ((try? input.hidrawDevice(at: path))?.name, nil)
            default: (nil, nil)
            }
            do { return recorded(try driver.openActuator(uri, options: options), driver: id, name: name, serial: serial) } catch {
                throw Self.failure(error)
            }
        case .replay:
            // Plays nothing: what the cue sends is checked against the cassette when the run ends.
            guard let media else { throw CLIFailure(kind: .usage, message: "\(uri): a cassette cannot stand in for a pad here") }
            return try media.replaying(uri, clock: clock, open: schedule)
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not a haptic device: use usb:VID:PID, hidraw:PATH, evdev:PATH, log: or bell:")
        }
    }

    /// The pad driver that claims the device, found the way `hwprobe list` finds it.
    private func padDriver(for uri: DeviceURI) throws(CLIFailure) -> (any HapticPadDriver, String) {
        let subject: DeviceSubject
        do {
            switch uri {
            case .usb(let identity, _, _): subject = .usb(identity)
            case .hidraw(let path): subject = .hidraw(path: path, identity: try input.hidrawDevice(at: path).identity)
            case .evdev(let path):
                subject = .evdev(path: path, capabilities: try input.evdevDevice(at: path).capabilities)
            default: throw CLIFailure(kind: .usage, message: "\(uri) is not a pad")
            }
        } catch let error as Errno {
            throw Self.failure(opening: uri, error)
        } catch let error as CLIFailure {
            throw error
        } catch {
            throw CLIFailure(kind: .device, message: "\(uri): \(error)")
        }
        guard let claim = registry.claim(subject) else {
            throw CLIFailure(kind: .unsupported, message: "no linked driver drives \(uri): `hwprobe list` shows the pads this build knows")
        }
        guard let driver = claim.driver as? any HapticPadDriver else {
            throw CLIFailure(kind: .unsupported, message: "\(claim.descriptor.id) claims \(uri) but plays no haptics")
        }
        return (driver, claim.descriptor.id)
    }

    static func logActuator<C: Clock<Duration>>(clock: C, write: @escaping @Sendable (String) -> Void) -> any RumbleActuator {
        LogActuator(clock: clock, write: write)
    }

    /// A `RumbleScheduler` on whatever clock this is (the existential opened here).
    static func scheduler<C: Clock<Duration>>(_ actuator: any RumbleActuator, clock: C) -> any HapticSink {
        RumbleScheduler(actuator, clock: clock)
    }

    static func failure(opening uri: DeviceURI, _ error: Errno) -> CLIFailure {
        if error.meansPermission {
            return CLIFailure(kind: .permission, message: HapticError.permissionDenied(uri.description).description)
        }
        if error == .noEntry || error.meansDeviceGone {
            return CLIFailure(kind: .device, message: "no device at \(uri): `hwprobe list` shows the pads attached")
        }
        return CLIFailure(kind: .device, message: "cannot query \(uri): \(error)")
    }

    static func failure(_ error: HapticError) -> CLIFailure {
        let kind: CLIFailure.Kind = switch error {
        case .disappeared, .notFound, .io: .device
        case .permissionDenied: .permission
        case .busy: .busy
        case .unsupported: .unsupported
        }
        return CLIFailure(kind: kind, message: error.description)
    }
}
