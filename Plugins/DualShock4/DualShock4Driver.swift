import HAL
import Transports

/// Sony DualShock 4, first and second revision, through hidraw output report 0x05.
public struct DualShock4Driver: HapticPadDriver {
    /// USB identities accepted: 054c:05c4 (first revision) and 054c:09cc (second).
    public static let identities = [USBIdentity(vendor: 0x054C, product: 0x05C4), USBIdentity(vendor: 0x054C, product: 0x09CC)]

    /// The driver keeps no state; one instance serves every pad.
    public init() {}

    /// Registry entry: id "dualshock4-hidraw", matching hidraw nodes of either identity.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "dualshock4-hidraw", name: "DualShock 4 (hidraw)", kind: .hapticPad,
                         rules: Self.identities.map { .hidraw(vendor: $0.vendor, product: $0.product) })
    }

    /// `open(_:)` as a type-erased actuator.
    public func openActuator(_ uri: DeviceURI) throws(HapticError) -> any RumbleActuator {
        try open(uri)
    }

    /// `hidraw:/dev/hidrawN`. Checks who is behind the node before writing to it: a wrong N must
    /// not send a DualShock report to a keyboard.
    public func open(_ uri: DeviceURI) throws(HapticError) -> DualShock4Actuator {
        guard case .hidraw(let path) = uri else {
            throw .unsupported("the DualShock 4 driver opens hidraw:/dev/hidrawN URIs, not \(uri)")
        }
        let device: HidrawDevice
        do {
            device = try HidrawDevice.open(path)
        } catch {
            throw Self.hapticError(error)
        }
        guard Self.identities.contains(device.identity) else {
            device.close()
            throw .unsupported("\(path) is \(device.identity), not a DualShock 4 (054c:05c4 or 054c:09cc): pick its hidraw node from `hwprobe list`")
        }
        guard device.bus == .usb else {
            device.close()
            throw .unsupported("the DualShock 4 at \(path) is not on USB (Bluetooth needs report 0x11 with a checksum): connect it with a cable")
        }
        guard Self.declaresOutputReport(device.reportDescriptor) else {
            device.close()
            throw .unsupported("\(path) does not declare output report 0x05: it is not the pad's HID interface")
        }
        return DualShock4Actuator(device: device)
    }

    /// Whether the report descriptor names report ID 0x05 (item `85 05`) and has an Output main
    /// item (`91 xx`) somewhere after it. A light walk over short items, enough to tell the pad's
    /// own interface from the audio or a clone's other interfaces.
    static func declaresOutputReport(_ descriptor: [UInt8]) -> Bool {
        var index = 0
        var inReport5 = false
        while index < descriptor.count {
            let prefix = descriptor[index]
            if prefix == 0xFE {
                // A long item: its data size is the next byte, then a tag byte.
                guard index + 1 < descriptor.count else { return false }
                index += 3 + Int(descriptor[index + 1])
                continue
            }
            let size = [0, 1, 2, 4][Int(prefix & 0x03)]
            guard index + size < descriptor.count || size == 0 else { return false }
            let tag = prefix & 0xFC
            if tag == 0x84 { // Report ID
                inReport5 = size >= 1 && descriptor[index + 1] == DualShock4Report.reportID
            } else if tag == 0x90, inReport5 { // Output
                return true
            }
            index += 1 + size
        }
        return false
    }

    static func hapticError(_ error: HidrawError) -> HapticError {
        switch error {
        case .disappeared(let path): .disappeared("hidraw:\(path)")
        case .permissionDenied(let path): .permissionDenied("hidraw:\(path)")
        case .notFound, .notHidraw, .timedOut, .io: .io(error.description)
        }
    }
}
