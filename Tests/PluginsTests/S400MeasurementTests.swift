import HAL
import MiScale
import Testing

/// The Xiaomi Body Composition Scale S400's encrypted MiBeacon advertisements (issue 29, item 4),
/// read with its bind key. The two captured frames, their scale's address and bind key, and what
/// they decode to (69.9 kg, 543.2 Ω at 50 kHz, 92 bpm, profile 1; then 250 kHz impedance only)
/// are the published test data of Bluetooth-Devices/xiaomi-ble (tests/test_parser.py,
/// `test_Xiaomi_Scale_S400_MJTZC01YM` and `…_packet_2`).
@Suite struct S400MeasurementTests {
    static let mac: [UInt8] = [0x8C, 0xD0, 0xB2, 0xF6, 0xBE, 0xEF]
    static let bindKey = Hex.bytes("0728974d657a4b60964c1b1677f35f7c") ?? []
    static let weightFrame = Hex.bytes("4859d53b0abc078ff2348c844138e930220000009e538599") ?? []
    static let impedanceFrame = Hex.bytes("4859d53b0bd6ef0b25db72785e7e2f46d6000000d8642df6") ?? []

    @Test func theCapturedWeightFrameDecrypts() throws {
        let frame = try #require(MiBeaconFrame(serviceData: Self.weightFrame))
        #expect(frame.version == 5 && frame.isEncrypted && frame.includesObjects)
        #expect(S400Measurement.productIDs.contains(frame.productID))
        let reading = try #require(try S400Measurement.read(serviceData: Self.weightFrame, mac: Self.mac, bindKey: Self.bindKey))
        #expect(reading.kilograms == 69.9)
        #expect(reading.lowFrequencyImpedance == 543.2)
        #expect(reading.heartRate == 92)
        #expect(reading.profileID == 1)
        #expect(reading.highFrequencyImpedance == nil && !reading.steppedOff)
    }

    @Test func theCapturedImpedanceFrameDecrypts() throws {
        let reading = try #require(try S400Measurement.read(serviceData: Self.impedanceFrame, mac: Self.mac, bindKey: Self.bindKey))
        #expect(reading.kilograms == nil && reading.heartRate == nil)
        #expect(reading.highFrequencyImpedance != nil)
    }

    @Test func aWrongKeySaysSoInsteadOfAWrongWeight() throws {
        var wrong = Self.bindKey
        wrong[0] ^= 0x01
        #expect(throws: MiBeaconError.wrongBindKey) { try S400Measurement.read(serviceData: Self.weightFrame, mac: Self.mac, bindKey: wrong) }
        #expect(MiBeaconError.wrongBindKey.description.hasPrefix("the bind key does not decrypt this scale's advertisements"))
        // Another scale's address is a different nonce: the MIC fails just the same.
        #expect(throws: MiBeaconError.wrongBindKey) {
            try S400Measurement.read(serviceData: Self.weightFrame, mac: [0x8C, 0xD0, 0xB2, 0xF6, 0xBE, 0xEE], bindKey: Self.bindKey)
        }
        // A damaged frame too.
        var damaged = Self.weightFrame
        damaged[7] ^= 0x40
        #expect(throws: MiBeaconError.wrongBindKey) { try S400Measurement.read(serviceData: damaged, mac: Self.mac, bindKey: Self.bindKey) }
        #expect(throws: MiBeaconError.needsBindKey) { try S400Measurement.read(serviceData: Self.weightFrame, mac: Self.mac, bindKey: nil) }
        #expect(throws: MiBeaconError.badBindKeyLength(15)) {
            try S400Measurement.read(serviceData: Self.weightFrame, mac: Self.mac, bindKey: Array(Self.bindKey.prefix(15)))
        }
    }

    /// A frame built from the published layout (object 0x6E16: profile, mass/heart/impedance
    /// word) and sealed with our encryption reads back; and the captured frame's objects, sealed
    /// again with its own counters, give the captured bytes.
    @Test func framesBuiltFromTheLayoutReadBack() throws {
        // 72.5 kg, 70 bpm, 480.0 Ω, profile 3: mass 725 | (70 − 50) << 11 | 4800 << 18.
        let word = UInt32(725) | UInt32(20) << 11 | UInt32(4800) << 18
        let object: [UInt8] = [0x16, 0x6E, 9, 3] + LittleEndian.u32(word) + [0, 0, 0, 0]
        let header: [UInt8] = [0x48, 0x59, 0xD5, 0x3B, 0x42]
        let sealed = try #require(MiBeaconCipher.encrypt(header: header, objects: object, extendedCounter: [1, 0, 0], mac: Self.mac, bindKey: Self.bindKey))
        let reading = try #require(try S400Measurement.read(serviceData: sealed, mac: Self.mac, bindKey: Self.bindKey))
        #expect(reading.kilograms == 72.5 && reading.heartRate == 70 && reading.lowFrequencyImpedance == 480 && reading.profileID == 3)

        let frame = try #require(MiBeaconFrame(serviceData: Self.weightFrame))
        let objects = try MiBeaconCipher.decrypt(frame, mac: Self.mac, bindKey: Self.bindKey)
        #expect(objects.count == 12 && objects.prefix(3) == [0x16, 0x6E, 9])
        let again = MiBeaconCipher.encrypt(header: Array(Self.weightFrame.prefix(5)), objects: objects,
                                           extendedCounter: Array(Self.weightFrame.suffix(7).prefix(3)), mac: Self.mac, bindKey: Self.bindKey)
        #expect(again == Self.weightFrame)
    }

    @Test func framesWithoutAMeasurementOrTooShortAreToldApart() throws {
        // An idle frame (no object bit): no reading, no error.
        #expect(try S400Measurement.read(serviceData: [0x08, 0x59, 0xD5, 0x3B, 0x01], mac: Self.mac, bindKey: Self.bindKey) == nil)
        #expect(throws: MiBeaconError.self) { try S400Measurement.read(serviceData: [0x48, 0x59, 0xD5], mac: Self.mac, bindKey: Self.bindKey) }
        // Encrypted but shorter than ciphertext + counter + MIC.
        #expect(throws: MiBeaconError.self) { try S400Measurement.read(serviceData: [0x48, 0x59, 0xD5, 0x3B, 0x01, 0, 0, 0], mac: Self.mac, bindKey: Self.bindKey) }
        // Plain (unencrypted) objects read without a key; an object longer than the data is malformed.
        let plain: [UInt8] = [0x40, 0x59, 0xD5, 0x3B, 0x01, 0x16, 0x6E, 9, 1, 0xBB, 0x02, 0, 0, 0, 0, 0, 0]
        #expect(try S400Measurement.read(serviceData: plain, mac: Self.mac, bindKey: nil)?.kilograms == 69.9)
        #expect(throws: MiBeaconError.self) { try S400Measurement.read(serviceData: Array(plain.dropLast()), mac: Self.mac, bindKey: nil) }
    }
}
