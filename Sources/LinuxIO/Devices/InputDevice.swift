import CLinuxShims

/// An input device's bus and IDs (EVIOCGID, HIDIOCGRAWINFO).
package struct InputIdentity: Sendable, Hashable {
    /// BUS_* from <linux/input.h>.
    package var bus: UInt32
    package var vendor: UInt16
    package var product: UInt16

    /// BUS_USB.
    package static let busUSB = HAL_BUS_USB
    /// BUS_BLUETOOTH.
    package static let busBluetooth = HAL_BUS_BLUETOOTH
}

/// evdev's ioctls and force-feedback writes. Each throws the kernel's errno; ENOTTY means the
/// node is not an evdev node at all.
extension FileDescriptor {
    /// EVIOCGNAME: the device's name, as the driver gives it.
    package func evdevName() throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = try check(hal_evdev_name(rawValue, &buffer, buffer.count))
        return Self.text(buffer)
    }

    /// EVIOCGID: bus, vendor and product.
    package func evdevIdentity() throws(Errno) -> InputIdentity {
        var id = hal_input_id()
        _ = try check(hal_evdev_id(rawValue, &id))
        return InputIdentity(bus: UInt32(id.bustype), vendor: id.vendor, product: id.product)
    }

    /// Whether the device has FF_RUMBLE force feedback (EVIOCGBIT(EV_FF)).
    package func evdevHasRumble() throws(Errno) -> Bool { try check(hal_evdev_has_rumble(rawValue)) == 1 }

    /// Whether the device has FF_GAIN, a device-wide strength.
    package func evdevHasGain() throws(Errno) -> Bool { try check(hal_evdev_has_gain(rawValue)) == 1 }

    /// EVIOCGEFFECTS: how many effects the device holds at once.
    package func evdevEffectSlots() throws(Errno) -> Int {
        var slots: Int32 = 0
        _ = try check(hal_evdev_effect_slots(rawValue, &slots))
        return Int(slots)
    }

    /// EVIOCSFF of a rumble effect: `id` -1 uploads a new one, an existing id replaces it; the
    /// kernel's id comes back in `id`.
    package func evdevUploadRumble(id: inout Int16, strong: UInt16, weak: UInt16, milliseconds: UInt16) throws(Errno) {
        _ = try check(hal_evdev_upload_rumble(rawValue, &id, strong, weak, milliseconds))
    }

    /// Writes one EV_FF event: plays effect `code` `value` times (0 stops it), or sets FF_GAIN.
    package func evdevWriteForceFeedback(code: UInt16, value: Int32) throws(Errno) {
        _ = try check(hal_evdev_write_ff(rawValue, code, value))
    }

    /// EVIOCRMFF: frees an uploaded effect's slot.
    package func evdevErase(_ id: Int16) throws(Errno) {
        _ = try check(hal_evdev_erase(rawValue, id))
    }

    /// FF_GAIN, the code ``evdevWriteForceFeedback(code:value:)`` sets the device-wide strength with.
    package static let forceFeedbackGain = HAL_FF_GAIN

    /// HIDIOCGRAWINFO: bus, vendor and product of a hidraw node.
    package func hidrawIdentity() throws(Errno) -> InputIdentity {
        var bus: UInt32 = 0
        var vendor: Int16 = 0
        var product: Int16 = 0
        _ = try check(hal_hidraw_info(rawValue, &bus, &vendor, &product))
        return InputIdentity(bus: bus, vendor: UInt16(bitPattern: vendor), product: UInt16(bitPattern: product))
    }

    /// HIDIOCGRAWNAME: the device's name, nil when the node will not say (it is still usable).
    package func hidrawName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard hal_hidraw_name(rawValue, &buffer, buffer.count) >= 0, buffer[0] != 0 else { return nil }
        return Self.text(buffer)
    }

    /// HIDIOCGRDESC: the report descriptor, up to the 4096 bytes HID allows.
    package func hidrawReportDescriptor() throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let length = try check(hal_hidraw_report_descriptor(rawValue, &buffer, buffer.count))
        return Array(buffer.prefix(Int(length)))
    }

    /// A NUL-terminated C buffer as text.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
