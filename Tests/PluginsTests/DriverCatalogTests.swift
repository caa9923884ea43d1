import DualShock4
import EvdevRumble
import HAL
import MiScale
import MirrorProfile
import StandardScale
import Testing
import Xbox360Pad

/// The catalog: devices as they present themselves, and the driver that must claim each.
/// Adding a driver means adding its devices here.
@Suite struct DriverCatalogTests {
    static let drivers: [any Driver] = [MirrorDriver(), MiScaleDriver(), StandardScaleDriver(),
                                        Xbox360PadDriver(), DualShock4Driver(), EvdevRumbleDriver()]
    let registry = DriverRegistry(drivers: drivers)

    struct Entry: Sendable, CustomTestStringConvertible {
        var name: String
        var subject: DeviceSubject
        var driver: String?
        var testDescription: String { name }
    }

    static let catalog: [Entry] = [
        Entry(name: "mirror, legacy advertisement (no name)", subject: .advertisement(Advertisement(
            flags: 0x06, serviceUUIDs: [MirrorDriver.service], manufacturerData: [0xFFFF: [0x4D, 0x52, 0x01, 0x00, 0x00, 0x4F, 0x2A]])),
              driver: "mirror-v1"),
        Entry(name: "mirror, service only (manufacturer data lost)", subject: .advertisement(Advertisement(
            serviceUUIDs: [MirrorDriver.service])), driver: "mirror-v1"),
        Entry(name: "another FFFF test device is not a mirror", subject: .advertisement(Advertisement(
            manufacturerData: [0xFFFF: [0x00, 0x01]])), driver: nil),
        Entry(name: "Mi Body Composition Scale 2", subject: .advertisement(Advertisement(
            flags: 0x06, localName: "MIBFS", serviceUUIDs: [BluetoothUUID(0x181B)],
            serviceData: [BluetoothUUID(0x181B): [0x02, 0x26, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05, 0xF4, 0x01, 0x5C, 0x38]])),
              driver: "mi-scale"),
        Entry(name: "Mi Smart Scale 2", subject: .advertisement(Advertisement(
            localName: "MI SCALE2", serviceData: [BluetoothUUID(0x181D): [0x22, 0x5C, 0x38, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05]])),
              driver: "mi-scale"),
        Entry(name: "standard Weight Scale", subject: .advertisement(Advertisement(
            localName: "BS440", serviceUUIDs: [BluetoothUUID(0x181D), BluetoothUUID(0x180F)])), driver: "standard-scale"),
        Entry(name: "standard Body Composition", subject: .advertisement(Advertisement(
            serviceUUIDs: [BluetoothUUID(0x181B), BluetoothUUID(0x181D)])), driver: "standard-scale"),
        Entry(name: "heart-rate strap", subject: .advertisement(Advertisement(serviceUUIDs: [BluetoothUUID(0x180D)])), driver: nil),
        Entry(name: "Xbox 360 wired pad", subject: .usb(USBIdentity(vendor: 0x045E, product: 0x028E)), driver: "xbox360-usb"),
        Entry(name: "Xbox One pad is not a 360 pad", subject: .usb(USBIdentity(vendor: 0x045E, product: 0x02EA)), driver: nil),
        Entry(name: "DualShock 4 v1", subject: .hidraw(path: "/dev/hidraw0", identity: USBIdentity(vendor: 0x054C, product: 0x05C4)),
              driver: "dualshock4-hidraw"),
        Entry(name: "DualShock 4 v2", subject: .hidraw(path: "/dev/hidraw1", identity: USBIdentity(vendor: 0x054C, product: 0x09CC)),
              driver: "dualshock4-hidraw"),
        Entry(name: "any force-feedback pad", subject: .evdev(path: "/dev/input/event5", capabilities: [.rumble]), driver: "evdev-rumble"),
        Entry(name: "a keyboard", subject: .evdev(path: "/dev/input/event0", capabilities: []), driver: nil),
    ]

    @Test(arguments: catalog)
    func eachDeviceGoesToItsDriver(_ entry: Entry) {
        let claim = registry.claim(entry.subject)
        #expect(claim?.descriptor.id == entry.driver, "\(claim?.reason ?? "unclaimed")")
    }

    @Test func driverIdentitiesAreUniqueAndKindsRight() {
        let ids = Self.drivers.map(\.descriptor.id)
        #expect(Set(ids).count == ids.count)
        #expect(Self.drivers.allSatisfy { !$0.descriptor.rules.isEmpty })
        #expect(MirrorDriver().descriptor.kind == .mirror)
        #expect(MiScaleDriver().descriptor.kind == .scale)
        #expect(Xbox360PadDriver().descriptor.kind == .hapticPad)
    }

    @Test func theFakeMirrorAdvertisesLikeARealOne() {
        #expect(registry.claim(.advertisement(MirrorScript().advertisement))?.descriptor.id == "mirror-v1")
    }
}
