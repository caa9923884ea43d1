import HAL
import Testing

/// Drivers declared here as data, the way plugins declare themselves, to test matching alone.
struct TestDriver: Driver {
    var descriptor: DriverDescriptor
    init(_ id: String, kind: DeviceKind = .scale, _ rules: [MatchRule]) {
        descriptor = DriverDescriptor(id: id, name: id, kind: kind, rules: rules)
    }
}

@Suite struct RegistryTests {
    let standard = TestDriver("standard", [.serviceUUID(BluetoothUUID(0x181D)), .serviceUUID(BluetoothUUID(0x181B))])
    let mi = TestDriver("mi", [.serviceData(BluetoothUUID(0x181B)), .serviceData(BluetoothUUID(0x181D))])
    let mirror = TestDriver("mirror", kind: .mirror, [.manufacturer(companyID: 0xFFFF, prefix: [0x4D, 0x52]),
                                                .serviceUUID(BluetoothUUID(string: "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00")!)])
    let named = TestDriver("named", [.namePrefix("Mirror")])
    let anyDev = TestDriver("anydev", kind: .mirror, [.manufacturer(companyID: 0xFFFF, prefix: [])])

    var registry: DriverRegistry { DriverRegistry(drivers: [standard, mi, mirror, named, anyDev]) }

    @Test func serviceDataBeatsAListedServiceWhateverTheOrder() throws {
        // A Mi Body Composition Scale 2 lists 181B and broadcasts its reading as 181B service data.
        let ad = Advertisement(serviceUUIDs: [BluetoothUUID(0x181B)], serviceData: [BluetoothUUID(0x181B): Array(repeating: 0, count: 13)])
        let claim = try #require(registry.claim(.advertisement(ad)))
        #expect(claim.descriptor.id == "mi")
        #expect(claim.rule == .serviceData(BluetoothUUID(0x181B)))
        #expect(claim.alsoMatched.map(\.driver) == ["standard"])
        #expect(claim.reason == "mi by service data 181B (over standard by service 181B)")
        let reversed = DriverRegistry(drivers: [mi, standard].reversed())
        #expect(reversed.claim(.advertisement(ad))?.descriptor.id == "mi")
    }

    @Test func aPlainStandardScaleGoesToTheStandardDriver() {
        let ad = Advertisement(localName: "Scale", serviceUUIDs: [BluetoothUUID(0x181D)])
        #expect(registry.claim(.advertisement(ad))?.descriptor.id == "standard")
    }

    @Test func longerManufacturerPrefixWinsOverBareCompanyAndName() throws {
        let ad = Advertisement(localName: "Mirror 4F2A", manufacturerData: [0xFFFF: [0x4D, 0x52, 1, 0, 0, 0x4F, 0x2A]])
        let claim = try #require(registry.claim(.advertisement(ad)))
        #expect(claim.descriptor.id == "mirror")
        #expect(claim.rule == .manufacturer(companyID: 0xFFFF, prefix: [0x4D, 0x52]))
        #expect(Set(claim.alsoMatched.map(\.driver)) == ["anydev", "named"])
        #expect(claim.alsoMatched.first?.driver == "anydev")
    }

    @Test func prefixMustMatchTheDataStart() {
        let other = Advertisement(manufacturerData: [0xFFFF: [0x00, 0x4D, 0x52]])
        #expect(registry.claim(.advertisement(other))?.descriptor.id == "anydev")
        let short = Advertisement(manufacturerData: [0xFFFF: [0x4D]])
        #expect(registry.claim(.advertisement(short))?.descriptor.id == "anydev")
    }

    @Test func equallySpecificRulesGoToTheFirstRegistered() {
        let a = TestDriver("a", [.serviceUUID(BluetoothUUID(0x180F))])
        let b = TestDriver("b", [.serviceUUID(BluetoothUUID(0x180F))])
        let ad = Advertisement(serviceUUIDs: [BluetoothUUID(0x180F)])
        #expect(DriverRegistry(drivers: [a, b]).claim(.advertisement(ad))?.descriptor.id == "a")
        #expect(DriverRegistry(drivers: [b, a]).claim(.advertisement(ad))?.descriptor.id == "b")
    }

    @Test func nothingMatchesNothing() {
        #expect(registry.claim(.advertisement(Advertisement(localName: "Headphones"))) == nil)
        #expect(registry.claim(.usb(USBIdentity(vendor: 1, product: 2))) == nil)
    }

    @Test func usbHidrawAndEvdevRules() {
        let xbox = TestDriver("xbox", kind: .hapticPad, [.usb(vendor: 0x045E, product: 0x028E)])
        let ds4 = TestDriver("ds4", kind: .hapticPad, [.hidraw(vendor: 0x054C, product: 0x09CC)])
        let ff = TestDriver("ff", kind: .hapticPad, [.evdev(.rumble)])
        let pads = DriverRegistry(drivers: [ff, xbox, ds4])
        #expect(pads.claim(.usb(USBIdentity(vendor: 0x045E, product: 0x028E)))?.descriptor.id == "xbox")
        #expect(pads.claim(.usb(USBIdentity(vendor: 0x045E, product: 0x028F))) == nil)
        #expect(pads.claim(.hidraw(path: "/dev/hidraw0", identity: USBIdentity(vendor: 0x054C, product: 0x09CC)))?.descriptor.id == "ds4")
        #expect(pads.claim(.evdev(path: "/dev/input/event3", capabilities: [.rumble]))?.rule == .evdev(.rumble))
        #expect(pads.claim(.evdev(path: "/dev/input/event4", capabilities: [])) == nil)
        #expect(pads.usbIdentities == [USBIdentity(vendor: 0x045E, product: 0x028E)])
    }

    @Test func ruleDescriptionsNameTheEvidence() {
        #expect(MatchRule.usb(vendor: 0x045E, product: 0x028E).description == "USB 045e:028e")
        #expect(MatchRule.namePrefix("MIBFS").description == "name \"MIBFS…\"")
        #expect(MatchRule.manufacturer(companyID: 0x0157, prefix: []).description == "manufacturer 0157")
    }
}
