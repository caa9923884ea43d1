import CLinuxShims
import HAL
import LinuxIO
import Synchronization

/// An evdev node opened for force feedback: the kernel's own rumble interface, which works for
/// any pad whose driver (xpad, hid-sony, hid-playstation, uinput…) implements FF_RUMBLE. Effects
/// are uploaded with EVIOCSFF, played by writing EV_FF events and erased with EVIOCRMFF.
public final class EvdevForceFeedback: Sendable {
    public let path: String
    /// How many effects the device holds at once (EVIOCGEFFECTS).
    public let effectSlots: Int
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
            guard try check(hal_evdev_has_rumble(fd.rawValue)) == 1 else {
                fd.close()
                throw HapticError.unsupported("\(path) has no FF_RUMBLE force feedback: pick an evdev node that `hwprobe list` shows")
            }
            var slots: Int32 = 0
            _ = try check(hal_evdev_effect_slots(fd.rawValue, &slots))
            effectSlots = Int(slots)
            supportsGain = try check(hal_evdev_has_gain(fd.rawValue)) == 1
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
        let milliseconds = UInt16(clamping: length.components.seconds * 1000 + length.components.attoseconds / 1_000_000_000_000_000)
        try perform("uploading an effect to") { fd in hal_evdev_upload_rumble(fd, &effectID, strong, weak, milliseconds) }
        return effectID
    }

    /// Starts (`count` ≥ 1) or stops (`count` 0) an uploaded effect.
    public func play(_ id: Int16, count: Int32 = 1) throws(HapticError) {
        try perform("playing an effect on") { fd in hal_evdev_write_ff(fd, UInt16(bitPattern: id), count) }
    }

    public func erase(_ id: Int16) throws(HapticError) {
        try perform("erasing an effect on") { fd in hal_evdev_erase(fd, id) }
    }

    /// Sets the device-wide strength (0…0xFFFF); a no-op when the device has no FF_GAIN.
    public func setGain(_ gain: UInt16) throws(HapticError) {
        guard supportsGain else { return }
        try perform("setting the gain of") { fd in hal_evdev_write_ff(fd, HAL_FF_GAIN, Int32(gain)) }
    }

    private func perform(_ doing: String, _ call: (Int32) -> Int32) throws(HapticError) {
        let rc = descriptor.withLock { fd in fd.map { call($0.rawValue) } }
        guard let rc else { throw .disappeared("evdev:\(path)") }
        do { _ = try check(rc) } catch { throw Self.error(error, path: path, doing: doing) }
    }

    static func error(_ errno: Errno, path: String, doing: String) -> HapticError {
        if errno.meansDeviceGone || errno.code == Errno.noEntry.code && doing != "opening" { return .disappeared("evdev:\(path)") }
        if errno.meansPermission { return .permissionDenied("evdev:\(path)") }
        if errno == .noEntry { return .unsupported("no evdev node \(path): check the path with `hwprobe list`") }
        if errno == .notTTY { return .unsupported("\(path) is not an evdev node") }
        return .io("\(doing) \(path): \(errno)")
    }
}
