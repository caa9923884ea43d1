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

    /// The sink a flow command's `--haptics URI` names, or none without the option.
    func open(option text: String?) throws(CLIFailure) -> (any HapticSink)? {
        guard let text else { return nil }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--haptics")
        guard uri.family == .haptics else {
            throw CLIFailure(kind: .usage, message: "--haptics \(uri) is not a haptic device: use usb:VID:PID, hidraw:PATH, evdev:PATH, log: or bell:")
        }
        return try open(uri)
    }

    func open(_ uri: DeviceURI) throws(CLIFailure) -> any HapticSink {
        let clock = ContinuousClock()
        switch uri {
        case .log:
            let console = console, toOut = logToStandardOutput
            return RumbleScheduler(LogActuator(clock: clock) { text in toOut ? console.out(text) : console.err(text) }, clock: clock)
        case .bell:
            let console = console
            return RumbleScheduler(BellActuator { console.err("\u{07}") }, clock: clock)
        case .usb, .hidraw, .evdev:
            let driver = try padDriver(for: uri)
            do { return RumbleScheduler(try driver.openActuator(uri, options: options), clock: clock) } catch {
                throw Self.failure(error)
            }
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not a haptic device: use usb:VID:PID, hidraw:PATH, evdev:PATH, log: or bell:")
        }
    }

    /// The pad driver that claims the device, found the way `hwprobe list` finds it.
    private func padDriver(for uri: DeviceURI) throws(CLIFailure) -> any HapticPadDriver {
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
        return driver
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
