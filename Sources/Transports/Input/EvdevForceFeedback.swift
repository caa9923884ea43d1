import HAL
import LinuxIO
import Synchronization

/// An evdev node opened for force feedback: the kernel's own rumble interface, which works for
/// any pad whose driver (xpad, hid-sony, hid-playstation, uinput…) implements FF_RUMBLE. Effects
/// are uploaded with EVIOCSFF, played by writing EV_FF events and erased with EVIOCRMFF.
public final class EvdevForceFeedback: Sendable {
    /// The evdev node this pad was opened at, for messages.
    public let path: String
    /// How many effects the device holds at once (EVIOCGEFFECTS).
    public let effectSlots: Int
    /// Whether the device has FF_GAIN, so `setGain` changes anything.
    public let supportsGain: Bool
    private let descriptor: Mutex<FileDescriptor?>

    /// Opens `path` read-write (playing is a write) and checks that it can rumble.
    public init(path: String) throws(HapticError) {
        self.path = path
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, .readWrite, nonBlocking: true) } catch {
            throw Self.error(error, path: path, doing: "opening")
        }
        do {
            guard try fd.evdevHasRumble() else {
                fd.close()
                throw HapticError.unsupported("\(path) has no FF_RUMBLE force feedback: pick an evdev node that `hwprobe list` shows")
            }
            effectSlots = try fd.evdevEffectSlots()
            supportsGain = try fd.evdevHasGain()
        } catch let error as HapticError {
            throw error
        } catch let error as Errno {
            fd.close()
            throw Self.error(error, path: path, doing: "querying force feedback of")
        } catch {
            fd.close()
            throw HapticError.io("\(path): \(error)")
        }
        descriptor = Mutex(fd)
    }

    deinit { close() }

    /// Closes the device; the kernel erases the effects this descriptor uploaded. Idempotent.
    public func close() {
        descriptor.withLock { fd in
            fd?.close()
            fd = nil
        }
    }

    /// Uploads a rumble effect (replacing `id` when given, so one slot is reused per cue) and
    /// returns the kernel's id for it. Magnitudes are the full 16-bit range.
    public func uploadRumble(strong: UInt16, weak: UInt16, length: Duration, replacing id: Int16? = nil) throws(HapticError) -> Int16 {
        var effectID: Int16 = id ?? -1
        let milliseconds = UInt16(clamping: length.wholeMilliseconds)
        try perform("uploading an effect to") { fd throws(Errno) in
            try fd.evdevUploadRumble(id: &effectID, strong: strong, weak: weak, milliseconds: milliseconds)
        }
        return effectID
    }

    /// Starts (`count` ≥ 1) or stops (`count` 0) an uploaded effect.
    public func play(_ id: Int16, count: Int32 = 1) throws(HapticError) {
        try perform("playing an effect on") { fd throws(Errno) in
            try fd.evdevWriteForceFeedback(code: UInt16(bitPattern: id), value: count)
        }
    }

    /// Frees an uploaded effect's slot on the device, so another can be uploaded.
    public func erase(_ id: Int16) throws(HapticError) {
        try perform("erasing an effect on") { fd throws(Errno) in try fd.evdevErase(id) }
    }

    /// Sets the device-wide strength (0…0xFFFF); a no-op when the device has no FF_GAIN.
    public func setGain(_ gain: UInt16) throws(HapticError) {
        guard supportsGain else { return }
        try perform("setting the gain of") { fd throws(Errno) in
            try fd.evdevWriteForceFeedback(code: FileDescriptor.forceFeedbackGain, value: Int32(gain))
        }
    }

    private func perform(_ doing: String, _ call: (FileDescriptor) throws(Errno) -> Void) throws(HapticError) {
        let outcome = descriptor.withLock { fd in fd.map { fd in Result { () throws(Errno) in try call(fd) } } }
        guard let outcome else { throw .disappeared("evdev:\(path)") }
        do { try outcome.get() } catch { throw Self.error(error, path: path, doing: doing) }
    }

    static func error(_ errno: Errno, path: String, doing: String) -> HapticError {
        if errno.meansDeviceGone || errno.code == Errno.noEntry.code && doing != "opening" { return .disappeared("evdev:\(path)") }
        if errno.meansPermission { return .permissionDenied("evdev:\(path)") }
        if errno == .noEntry { return .unsupported("no evdev node \(path): check the path with `hwprobe list`") }
        if errno == .notTTY { return .unsupported("\(path) is not an evdev node") }
        return .io("\(doing) \(path): \(errno)")
    }
}
