import HAL
import MiScale
import Testing
import Transports

/// The S400 through the `mi-scale` driver (issue 29, item 4): claimed by its MiBeacon product
/// id, read with the bind key for its address, refused (not misread) with a wrong one, and said
/// to need a key without one. The frames are xiaomi-ble's published captures
/// (`test_Xiaomi_Scale_S400_MJTZC01YM` and `…_packet_2`), with their scale's address and key.
@Suite struct S400DriverTests {
    static let address = BLEAddress(string: "8C:D0:B2:F6:BE:EF")!
    static let keyHex = "0728974d657a4b60964c1b1677f35f7c"
    static let weightFrame = Hex.bytes("4859d53b0abc078ff2348c844138e930220000009e538599")!
    static let impedanceFrame = Hex.bytes("4859d53b0bd6ef0b25db72785e7e2f46d6000000d8642df6")!

    static func advertisement(_ serviceData: [UInt8]) -> Advertisement {
        Advertisement(serviceData: [MiBeaconFrame.serviceUUID: serviceData], connectable: false)
    }

    static func driver(anyDevice: String? = nil, for scoped: [(String, String)] = []) -> MiScaleDriver {
        var keys = BindKeys()
        if let anyDevice, let key = BindKey.parse(hex: anyDevice) { keys.setForAnyDevice(key) }
        for (address, hex) in scoped {
            if let address = BLEAddress(string: address), let key = BindKey.parse(hex: hex) { keys.set(key, for: address) }
        }
        return MiScaleDriver(bindKeys: keys)
    }

    @Test func theS400IsClaimedByItsProductIDAndOtherMiBeaconDevicesAreNot() throws {
        let registry = DriverRegistry(drivers: [MiScaleDriver()])
        let claim = try #require(registry.claim(.advertisement(Self.advertisement(Self.weightFrame))))
        #expect(claim.descriptor.id == "mi-scale" && claim.descriptor.kind == .scale)
        #expect(claim.rule == .serviceDataBytes(BluetoothUUID(0xFE95), offset: 2, bytes: [0xD5, 0x3B]))
        #expect(claim.reason == "mi-scale by service data FE95 with D5 3B at byte 2")
        // Every S400 product id is claimed, idle frames too; a thermometer's (LYWSDCGQ, 0x01AA) is not.
        for id: UInt16 in [0x30D9, 0x3BD5, 0x48CF, 0x4B05] {
            #expect(registry.claim(.advertisement(Self.advertisement([0x08, 0x59, UInt8(id & 0xFF), UInt8(id >> 8), 0x01]))) != nil)
        }
        #expect(registry.claim(.advertisement(Self.advertisement([0x50, 0x20, 0xAA, 0x01, 0x01]))) == nil)
        #expect(registry.claim(.advertisement(Self.advertisement([0x48, 0x59, 0xD5]))) == nil, "too short to hold a product id")
        // Product id bytes over the service data rule of the older models: 302 over 300.
        #expect(MatchRule.serviceDataBytes(BluetoothUUID(0xFE95), offset: 2, bytes: [0xD5, 0x3B]).specificity
                > MatchRule.serviceData(BluetoothUUID(0x181B)).specificity)
    }

    @Test func theKeyForItsAddressReadsWeightImpedanceAndPulse() throws {
        for driver in [Self.driver(anyDevice: Self.keyHex), Self.driver(for: [(Self.address.description, Self.keyHex)])] {
            let reading = try #require(try driver.reading(from: Self.advertisement(Self.weightFrame), sentBy: Self.address))
            #expect(reading.kilograms == 69.9)
            #expect(reading.stable == true, "the S400 broadcasts only a finished measurement")
            #expect(reading.impedanceOhms == 543.2)
            #expect(reading.heartRateBpm == 92)
            #expect(!reading.loadRemoved)
            // The frame after it carries only the second impedance: no weight reading.
            #expect(try driver.reading(from: Self.advertisement(Self.impedanceFrame), sentBy: Self.address) == nil)
        }
    }

    @Test func withoutAKeyItSaysOneIsNeededForEveryFrameOfItsOwn() {
        let idle: [UInt8] = [0x08, 0x59, 0xD5, 0x3B, 0x01]
        for frame in [Self.weightFrame, idle] {
            #expect(throws: BroadcastReadingError.self) { try MiScaleDriver().reading(from: Self.advertisement(frame), sentBy: Self.address) }
            do {
                _ = try MiScaleDriver().reading(from: Self.advertisement(frame), sentBy: Self.address)
            } catch {
                guard case .needsKey(let words) = error else { Issue.record("\(error)"); continue }
                #expect(words.contains("bind key") && words.contains("--bind-key"))
            }
        }
        // A key for another scale is no key for this one.
        let elsewhere = Self.driver(for: [("8C:D0:B2:F6:BE:EE", Self.keyHex)])
        #expect(throws: BroadcastReadingError.needsKey(MiBeaconError.needsBindKey.description)) {
            try elsewhere.reading(from: Self.advertisement(Self.weightFrame), sentBy: Self.address)
        }
        // Without the sender's address nothing encrypted is read (and nothing is made up).
        #expect(Self.driver(anyDevice: Self.keyHex).reading(from: Self.advertisement(Self.weightFrame)) == nil)
    }

    @Test func aWrongKeyIsRefusedByTheTagNeverReadAsAWeight() {
        var wrong = Array(Self.keyHex)
        wrong[31] = wrong[31] == "c" ? "d" : "c"
        let wrongKey = String(wrong)
        let expected = BroadcastReadingError.wrongKey(MiBeaconError.wrongBindKey.description)
        #expect(expected.description.hasPrefix("the bind key does not decrypt this scale's advertisements"))
        for driver in [Self.driver(anyDevice: wrongKey), Self.driver(for: [(Self.address.description, wrongKey)])] {
            #expect(throws: expected) { try driver.reading(from: Self.advertisement(Self.weightFrame), sentBy: Self.address) }
        }
        // The right key, but a frame heard from another address: another nonce, the same refusal.
        #expect(throws: expected) {
            try Self.driver(anyDevice: Self.keyHex).reading(from: Self.advertisement(Self.weightFrame), sentBy: BLEAddress(string: "8C:D0:B2:F6:BE:EE")!)
        }
        // A key typed for this scale wins over a wrong one typed for any.
        let both = Self.driver(anyDevice: wrongKey, for: [(Self.address.description, Self.keyHex)])
        #expect((try? both.reading(from: Self.advertisement(Self.weightFrame), sentBy: Self.address))??.kilograms == 69.9)
    }

    @Test func theOlderModelsNeedNoKeyAndSayNothingAboutOne() throws {
        let frame: [UInt8] = [0x02, 0x26, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05, 0xF4, 0x01, 0x5C, 0x38]
        let advertisement = Advertisement(serviceData: [MiScaleDriver.bodyCompositionService: frame])
        let reading = try #require(try MiScaleDriver().reading(from: advertisement, sentBy: Self.address))
        #expect(abs(reading.kilograms - 72.14) < 0.001 && reading.heartRateBpm == nil)
        #expect(!MiScaleDriver().encryptsReadings(advertisement))
        #expect(MiScaleDriver().encryptsReadings(Self.advertisement(Self.weightFrame)))
    }

    @Test func keysGoToTheDriverThroughTheRegistry() throws {
        var keys = BindKeys()
        keys.setForAnyDevice(try #require(BindKey.parse(hex: Self.keyHex)))
        let registry = DriverRegistry(drivers: [MiScaleDriver()]).with(bindKeys: keys)
        let claim = try #require(registry.claim(.advertisement(Self.advertisement(Self.weightFrame))))
        let driver = try #require(claim.driver as? any BroadcastScaleDriver)
        #expect(try driver.reading(from: Self.advertisement(Self.weightFrame), sentBy: Self.address)?.kilograms == 69.9)
    }
}
