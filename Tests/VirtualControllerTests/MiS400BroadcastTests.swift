import BLEProtocol
import HAL
import Testing
@testable import Peripherals
import VirtualController

/// The bench's Xiaomi S400 (`sim:?scale=mi-s400`): its AES-CCM against xiaomi-ble's published
/// captures, and what it broadcasts as the display settles and the person steps off.
@Suite struct MiS400BroadcastTests {
    static let address = BLEAddress(string: "D4:12:3A:00:18:1D")!

    /// xiaomi-ble's captures (tests/test_parser.py, `test_Xiaomi_Scale_S400_MJTZC01YM` and
    /// `…_packet_2`): service data, the scale's MAC and bind key, and the objects they decrypt
    /// to (worked out once with pyca/cryptography's AESCCM, the parser's own library).
    static let captures: [(frame: String, objects: String)] = [
        ("4859d53b0abc078ff2348c844138e930220000009e538599", "166e0901bb52e154ed26f767"),
        ("4859d53b0bd6ef0b25db72785e7e2f46d6000000d8642df6", "166e09010000c04ded26f767"),
    ]
    static let captureMAC: [UInt8] = [0x8C, 0xD0, 0xB2, 0xF6, 0xBE, 0xEF]
    static let captureKey = Hex.bytes("0728974d657a4b60964c1b1677f35f7c")!

    @Test func sealingTheCapturedObjectsGivesTheCapturedBytes() throws {
        for capture in Self.captures {
            let frame = try #require(Hex.bytes(capture.frame))
            let nonce = Array(Self.captureMAC.reversed()) + Array(frame[2..<5]) + Array(frame.suffix(7).prefix(3))
            let sealed = MiS400BroadcastDevice.seal(try #require(Hex.bytes(capture.objects)), key: Self.captureKey, nonce: nonce, associatedData: [0x11])
            #expect(sealed.ciphertext + Array(frame.suffix(7).prefix(3)) + sealed.mic == Array(frame.dropFirst(5)), "\(capture.frame)")
        }
        // Any other key, nonce or associated data gives another MIC.
        let frame = try #require(Hex.bytes(Self.captures[0].frame))
        let nonce = Array(Self.captureMAC.reversed()) + Array(frame[2..<5]) + [0, 0, 0]
        let objects = try #require(Hex.bytes(Self.captures[0].objects))
        let right = MiS400BroadcastDevice.seal(objects, key: Self.captureKey, nonce: nonce, associatedData: [0x11]).mic
        var otherKey = Self.captureKey
        otherKey[0] ^= 1
        #expect(MiS400BroadcastDevice.seal(objects, key: otherKey, nonce: nonce, associatedData: [0x11]).mic != right)
        #expect(MiS400BroadcastDevice.seal(objects, key: Self.captureKey, nonce: nonce, associatedData: [0x12]).mic != right)
        #expect(MiS400BroadcastDevice.seal(objects, key: Array(Self.captureKey.prefix(15)), nonce: nonce, associatedData: [0x11]).mic.isEmpty)
    }

    /// Object 0x6E16 with the layout's packing, sealed under `frame`'s own counters.
    static func expected(_ frame: [UInt8], mass: UInt32, pulse: UInt32, impedance: UInt32) -> [UInt8] {
        let word = mass | pulse << 11 | impedance << 18
        let objects: [UInt8] = [0x16, 0x6E, 9, 1] + LittleEndian.u32(word) + [0, 0, 0, 0]
        let extended = Array(frame.suffix(7).prefix(3))
        let nonce = Array(address.bytes.reversed()) + Array(frame[2..<5]) + extended
        let sealed = MiS400BroadcastDevice.seal(objects, key: MiS400BroadcastDevice.demoBindKey, nonce: nonce, associatedData: [0x11])
        return Array(frame.prefix(5)) + sealed.ciphertext + extended + sealed.mic
    }

    @Test func itSendsIdleFramesWhileSettlingThenTheSealedMeasurementThenTheZeroOne() throws {
        #expect(MiS400BroadcastDevice.demoBindKeyHex == "687770726f62652d7334303064656d6f")
        var scale = BroadcastScalePeripheral(MiS400BroadcastDevice(), weightKilograms: 64.8, composition: .bench, address: Self.address)
        let seen = BroadcastScaleTests.timeline(&scale, until: .seconds(2))
        let frames = seen.compactMap { $0.1?.serviceData[BluetoothUUID(0xFE95)] }
        #expect(frames.count == 3)
        // While settling: version 5, no object, the product id 0x3BD5, a counter.
        for idle in frames.prefix(2) {
            #expect(idle.count == 5 && idle.prefix(4) == [0x08, 0x59, 0xD5, 0x3B])
        }
        // The measurement: 64.8 kg (648), pulse 68 (18), the bench's 512 Ω (5120), 24 bytes as the captures.
        let measured = try #require(frames.last)
        #expect(measured.count == 24 && measured.prefix(4) == [0x48, 0x59, 0xD5, 0x3B])
        #expect(measured == Self.expected(measured, mass: 648, pulse: 18, impedance: 5120))
        #expect(seen.last?.1?.localName == nil && seen.last?.1?.serviceUUIDs.isEmpty == true)

        scale.stepOff()
        let after = BroadcastScaleTests.timeline(&scale, until: .seconds(10), from: .seconds(5))
        let off = try #require(after.first?.1?.serviceData[BluetoothUUID(0xFE95)])
        #expect(off == Self.expected(off, mass: 0, pulse: 0, impedance: 0), "the all-zero measurement")
        // The counters differ, so the two sealed frames never share a nonce.
        #expect(off[4] != measured[4] || off.suffix(7).prefix(3) != measured.suffix(7).prefix(3))
    }

    @Test func itsFieldsSaturateInsteadOfWrapping() throws {
        var heavy = BroadcastScalePeripheral(MiS400BroadcastDevice(heartRateBpm: 250), weightKilograms: 300, address: Self.address)
        let frame = try #require(BroadcastScaleTests.timeline(&heavy, until: .seconds(2)).last?.1?.serviceData[BluetoothUUID(0xFE95)])
        #expect(frame == Self.expected(frame, mass: 0x7FF, pulse: 126, impedance: 0), "204.7 kg, 176 bpm, no impedance measured")
        var calm = BroadcastScalePeripheral(MiS400BroadcastDevice(heartRateBpm: nil), weightKilograms: 50, address: Self.address)
        let quiet = try #require(BroadcastScaleTests.timeline(&calm, until: .seconds(2)).last?.1?.serviceData[BluetoothUUID(0xFE95)])
        #expect(quiet == Self.expected(quiet, mass: 500, pulse: 0, impedance: 0))
    }
}
