/// Somewhere a cue can be felt, seen or heard: a rumble pad, force feedback, a bell, a log.
public protocol HapticSink: Sendable {
    /// Which device this is, in words for logs and the bench's device list.
    var name: String { get }
    /// Plays the cue's pattern and returns when it has finished. A new cue cancels the one still
    /// playing. Throws once the device is gone; flows carry on without haptics then.
    func play(_ cue: HapticCue) async throws(HapticError)
    /// Ends the cue still playing and lets go of the device.
    func close() async
}

extension HapticSink {
    /// Sinks with nothing to let go of need not write `close`.
    public func close() async {}
}

/// Why a haptic device could not be opened or stopped working, in words a person can act on.
public enum HapticError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device went away while in use; reported once, then cues are skipped.
    case disappeared(String)
    /// Nothing at that address: the words say what was looked for and what to check.
    case notFound(String)
    /// The OS refused us the device; usually the udev rule is missing.
    case permissionDenied(String)
    /// Another program holds the device; the text says what to close.
    case busy(String)
    /// The device cannot do what a sink needs, e.g. it has no rumble motors.
    case unsupported(String)
    /// Reading or writing the device failed for another reason; the text carries the OS error.
    case io(String)

    /// The words a person reads in messages and reports, with what to check where there is something.
    public var description: String {
        switch self {
        case .disappeared(let device): "haptic device \(device) disappeared: carrying on without haptics"
        case .notFound(let why): why
        case .permissionDenied(let device): "no permission to use \(device): install the udev rule from the README or run with sudo"
        case .busy(let why): why
        case .unsupported(let why): "unsupported: \(why)"
        case .io(let why): "haptic I/O failed: \(why)"
        }
    }
}
