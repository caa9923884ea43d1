import BeurerSanitasScale
import DualShock4
import EvdevRumble
import HAL
import HALFakes
import IcomonScale
import MiScale
import MirrorV1
import OneByoneScale
import QNScale
import StandardScale
import Testing
import Xbox360Pad
import YunmaiScale

/// The catalog: devices as they present themselves, and the driver that must claim each.
/// Adding a driver means adding its devices here.
@Suite struct DriverCatalogTests {
    /// In hwprobe's registration order (Sources/hwprobe/Drivers.swift; BootstrapTests checks it there).
    static let drivers: [any Driver] = [MirrorV1Driver(), MiScaleDriver(), QNBroadcastDriver(), QNScaleDriver(), IcomonScaleDriver(),
                                        OneByoneScaleDriver(), YunmaiScaleDriver(), BeurerSanitasScaleDriver(), StandardScaleDriver(),
                                        Xbox360PadDriver(), DualShock4Driver(), EvdevRumbleDriver()]
    let registry = DriverRegistry(drivers: drivers)

    struct Entry: Sendable, CustomTestStringConvertible {
        var name: String
        var subject: DeviceSubject
        var driver: String?
        /// For a scale-like device no driver claims: the family `list`'s hint must name.
        var resembles: String?
        var testDescription: String { name }
    }

    /// An advertisement as the vendor families' scales send them: flags, a 16-bit service list, a name.
    static func ad(_ name: String?, _ services: [UInt16] = [], manufacturer: [UInt16: [UInt8]] = [:]) -> DeviceSubject {
        .advertisement(Advertisement(flags: 0x06, localName: name, serviceUUIDs: services.map(BluetoothUUID.init),
                                     manufacturerData: manufacturer))
    }

    /// QNHandlerBroadcast.kt's layout: AA BB, the address, status at 15 (0x20 stable), weight LE at 17–18.
    static let qnBroadcast: [UInt8] = [0xAA, 0xBB, 0xC1, 0xB0, 0xB0, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0x43, 0x1C]

    /// The vendor families (issue 18). Names and services are those openScale's handlers test for
    /// in `supportFor` (oliexdev/openScale, android_app/…/core/bluetooth/scales/): QNHandler.kt
    /// (QN service AND a "qn-scale" / "renpho-scale" / "seb-scale" name), QNHandlerBroadcast.kt
    /// (manufacturer FFFF starting AA BB), MGBHandler.kt ("swan…", "icomon", "yg"), OneByoneHandler.kt
    /// (t9146 / t9147 / t9120 / "health scale"), YunmaiHandler.kt (YUNMAI-SIGNAL / -ISM / -ISSE),
    /// BeurerSanitasHandler.kt (bf-700, sanitas sbf70, sbf75, rt-libra …); the negatives are
    /// other protocols on the same vendor services, from the same folder (ActiveEraBF06Handler.kt
    /// "AE BS-06" on FFB0, HesleyHandler.kt on FFF0, MedisanaBs44xHandler.kt on 78B2) and the
    /// families not done (Yunmai X on 0x1320, OKOK on 0x20CA).
    static let vendorCatalog: [Entry] = [
        Entry(name: "QN-Scale on FFE0 (FITINDEX ES-26M)", subject: ad("QN-Scale", [0xFFE0]), driver: "qn-scale"),
        Entry(name: "Renpho on FFF0", subject: ad("Renpho-Scale", [0xFFF0]), driver: "qn-scale"),
        Entry(name: "SEB/Tefal Goodvibes on FFE0 (a QN rebrand)", subject: ad("SEB-SCALE 01", [0xFFE0]), driver: "qn-scale"),
        Entry(name: "a Renpho that also lists 181D is still read through QN", subject: ad("QN-Scale", [0xFFF0, 0x181D]),
              driver: "qn-scale"),
        Entry(name: "QN broadcast-only (ES-CS20M variant 3), no name", subject: ad(nil, manufacturer: [0xFFFF: qnBroadcast]),
              driver: "qn-broadcast"),
        Entry(name: "a QN name without QN services is not claimed", subject: ad("QN-Scale", [0x180F]), driver: nil,
              resembles: "QN / Yolanda (Renpho, FITINDEX …)"),
        Entry(name: "bare FFE0 without a name is not claimed", subject: ad(nil, [0xFFE0]), driver: nil,
              resembles: "QN / Yolanda, Yunmai or Beurer / Sanitas (all three use FFE0)"),
        Entry(name: "FFFF manufacturer data without AA BB is not a QN broadcast", subject: ad(nil, manufacturer: [0xFFFF: [0xAA, 0x00, 1, 2]]),
              driver: nil),
        Entry(name: "Swan on FFB0", subject: ad("Swan", [0xFFB0]), driver: "icomon-mgb"),
        Entry(name: "icomon on FFB0", subject: ad("icomon", [0xFFB0]), driver: "icomon-mgb"),
        Entry(name: "YG on FFB0", subject: ad("YG", [0xFFB0]), driver: "icomon-mgb"),
        Entry(name: "Active Era BS-06 (another FFB0 protocol) is not claimed", subject: ad("AE BS-06", [0xFFB0]), driver: nil,
              resembles: "LeFu / ICOMON"),
        Entry(name: "a Swan name without FFB0 is not claimed", subject: ad("Swan"), driver: nil, resembles: "LeFu / ICOMON"),
        Entry(name: "Eufy C1 (T9146)", subject: ad("eufy T9146", [0xFFF0]), driver: "onebyone-eufy"),
        Entry(name: "Eufy P1 (T9147)", subject: ad("eufy T9147"), driver: "onebyone-eufy"),
        Entry(name: "Eufy A1 (T9120)", subject: ad("T9120"), driver: "onebyone-eufy"),
        Entry(name: "1byone classic", subject: ad("Health Scale", [0xFFF0]), driver: "onebyone-eufy"),
        Entry(name: "Hesley (another FFF0 protocol) is not claimed", subject: ad("YunChen", [0xFFF0]), driver: nil,
              resembles: "QN / Yolanda or 1byone / Eufy (both use FFF0)"),
        Entry(name: "Yunmai Mini", subject: ad("YUNMAI-ISM2", [0xFFE0]), driver: "yunmai"),
        Entry(name: "Yunmai Signal", subject: ad("YUNMAI-SIGNAL-CN", [0xFFE0]), driver: "yunmai"),
        Entry(name: "Yunmai SE", subject: ad("YUNMAI-ISSE-US", [0xFFE0]), driver: "yunmai"),
        Entry(name: "Yunmai X (broadcast on 0x1320) is not done", subject: ad("YUNMAI-X", manufacturer: [0x1320: [0x01, 0x02]]),
              driver: nil, resembles: "Yunmai"),
        Entry(name: "Sanitas SBF70", subject: ad("SANITAS SBF70", [0xFFE0]), driver: "beurer-sanitas"),
        Entry(name: "SilverCrest SBF75", subject: ad("SBF75", [0xFFE0]), driver: "beurer-sanitas"),
        Entry(name: "Beurer BF700", subject: ad("BEURER BF700", [0xFFE0]), driver: "beurer-sanitas"),
        Entry(name: "Runtastic Libra", subject: ad("RT-Libra-W", [0xFFE0]), driver: "beurer-sanitas"),
        Entry(name: "Medisana BS444 (78B2) is not done", subject: ad("01257B", [0x78B2]), driver: nil, resembles: "Medisana / Trisa"),
        Entry(name: "OKOK broadcast (0x20CA) is not done", subject: ad(nil, manufacturer: [0x20CA: [0, 1, 2, 3]]), driver: nil,
              resembles: "Chipsea / OKOK broadcast"),
        Entry(name: "a heart-rate strap resembles no scale", subject: ad("Polar H10", [0x180D]), driver: nil),
    ]

    static let catalog: [Entry] = [
        Entry(name: "mirror, legacy advertisement (no name)", subject: .advertisement(Advertisement(
            flags: 0x06, serviceUUIDs: [MirrorV1Driver.service], manufacturerData: [0xFFFF: [0x4D, 0x52, 0x01, 0x00, 0x00, 0x4F, 0x2A]])),
              driver: "mirror-v1"),
        Entry(name: "mirror, service only (manufacturer data lost)", subject: .advertisement(Advertisement(
            serviceUUIDs: [MirrorV1Driver.service])), driver: "mirror-v1"),
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

    @Test(arguments: catalog + vendorCatalog)
    func eachDeviceGoesToItsDriver(_ entry: Entry) {
        let claim = registry.claim(entry.subject)
        #expect(claim?.descriptor.id == entry.driver, "\(claim?.reason ?? "unclaimed")")
        if claim == nil {
            #expect(ScaleResemblance.likeness(of: entry.subject)?.resemblance.family == entry.resembles,
                    "what list's hint says it looks like")
        }
    }

    @Test func everyVendorDriverHasPositiveAndNegativeEntries() {
        let claimed = Set(Self.vendorCatalog.compactMap(\.driver))
        #expect(claimed == ["qn-scale", "qn-broadcast", "icomon-mgb", "onebyone-eufy", "yunmai", "beurer-sanitas"])
        #expect(Self.vendorCatalog.filter { $0.driver == nil }.count >= 8)
    }

    @Test func theQNBroadcastFixtureCarriesAReading() {
        #expect(QNBroadcastDriver().reading(from: Advertisement(manufacturerData: [0xFFFF: Self.qnBroadcast]))
                == WeightReading(kilograms: 72.35, stable: true))
    }

    @Test func driverIdentitiesAreUniqueAndKindsRight() {
        let ids = Self.drivers.map(\.descriptor.id)
        #expect(Set(ids).count == ids.count)
        #expect(Self.drivers.allSatisfy { !$0.descriptor.rules.isEmpty })
        #expect(MirrorV1Driver().descriptor.kind == .mirror)
        #expect(MiScaleDriver().descriptor.kind == .scale)
        #expect(Xbox360PadDriver().descriptor.kind == .hapticPad)
    }

    @Test func theFakeMirrorAdvertisesLikeARealOne() {
        #expect(registry.claim(.advertisement(MirrorScript().advertisement))?.descriptor.id == "mirror-v1")
    }
}
