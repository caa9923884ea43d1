import BLEProtocol
import HAL
import Testing
@testable import Peripherals
import VirtualController

/// The broadcasting families' advertisements, frame by frame against the public facts their files
/// cite, as the display settles on 72.35 kg and the person steps off.
@Suite struct BroadcastScaleTests {
    static let address = BLEAddress(string: "D4:12:3A:00:18:1D")!

    /// What the scale advertised at each change until `end`, parsed; nil while it slept.
    static func timeline<D: ScaleBroadcastDevice>(_ scale: inout BroadcastScalePeripheral<D>, until end: Duration,
                                                  from start: Duration = .zero) -> [(Duration, Advertisement?)] {
        var seen: [(Duration, Advertisement?)] = []
        var now = start
        while let due = scale.nextDeadline, due <= end {
            now = max(now, due)
            _ = scale.advance(to: now)
            guard scale.isAdvertising, case .legacy(let data, let response) = scale.advertising.form else {
                seen.append((now, nil))
                continue
            }
            #expect(response.isEmpty && data.count <= 31 && !scale.advertising.connectable)
            seen.append((now, try? AdvertisingData.parse(data, connectable: false)))
        }
        return seen
    }

    @Test func theMiBodyCompositionScaleBroadcastsEachReadingThenItsRemovalThenSleeps() {
        var scale = BroadcastScalePeripheral(MiScaleBroadcastDevice(), weightKilograms: 72.35, composition: .bench, address: Self.address)
        #expect(!scale.isAdvertising, "asleep until the first reading")
        var seen = Self.timeline(&scale, until: .seconds(2))
        #expect(seen.map(\.0) == [.zero, .milliseconds(300), .milliseconds(700), .milliseconds(1100)])
        #expect(seen.first?.1 == nil, "stepped on at power-up: nothing shown yet")
        let frames = seen.dropFirst().map { $0.1?.serviceData[BluetoothUUID(0x181B)] ?? [] }
        // Control 02 (kg) and 00 / 22 (stable, with impedance); 2026-01-01 00:00:00 on the scale's
        // clock (00:00:01 by the last); impedance 512 Ω and weight × 200 (14380, 14470) little-endian.
        let date: [UInt8] = [0xEA, 0x07, 1, 1, 0, 0]
        #expect(frames == [[0x02, 0x00] + date + [0, 0x00, 0x00, 0x2C, 0x38],
                           [0x02, 0x00] + date + [0, 0x00, 0x00, 0x86, 0x38],
                           [0x02, 0x22] + date + [1, 0x00, 0x02, 0x86, 0x38]])
        #expect(seen.last?.1?.localName == "MIBFS" && seen.last?.1?.flags == 0x06)
        scale.stepOff()
        seen = Self.timeline(&scale, until: .seconds(10), from: .seconds(5))
        #expect(seen.map(\.0) == [.seconds(5), .seconds(8)], "it lingers 3 s after the person leaves")
        #expect(seen.first?.1?.serviceData[BluetoothUUID(0x181B)] == [0x02, 0xA0, 0xEA, 0x07, 1, 1, 0, 0, 5, 0x00, 0x00, 0x86, 0x38],
                "the last weight, stable, with load removed, stamped when it left")
        #expect(seen.last?.1 == nil && !scale.isAdvertising)
    }

    @Test func theMiSmartScaleAndThePoundsAndJinFlags() {
        var smart = BroadcastScalePeripheral(MiScaleBroadcastDevice(model: .smartScale2), weightKilograms: 72.35, address: Self.address)
        let last = Self.timeline(&smart, until: .seconds(2)).last?.1
        #expect(last?.localName == "MI SCALE2")
        // Control 20 (stable), weight 14470 little-endian, then the date.
        #expect(last?.serviceData[BluetoothUUID(0x181D)] == [0x20, 0x86, 0x38, 0xEA, 0x07, 1, 1, 0, 0, 1])
        var pounds = BroadcastScalePeripheral(MiScaleBroadcastDevice(displayUnit: .pounds), weightKilograms: 45.359237, address: Self.address)
        // 100 lb × 100 = 10000 = 0x2710, with bit 0 of byte 0.
        #expect(Self.timeline(&pounds, until: .seconds(2)).last?.1?.serviceData[BluetoothUUID(0x181B)]?.suffix(2) == [0x10, 0x27])
        if case .legacy(let data, _) = pounds.advertising.form, let parsed = try? AdvertisingData.parse(data, connectable: false) {
            #expect(parsed.serviceData[BluetoothUUID(0x181B)]?.first == 0x03)
        }
        var jin = BroadcastScalePeripheral(MiScaleBroadcastDevice(model: .smartScale2, displayUnit: .jin), weightKilograms: 50, address: Self.address)
        // 100 jin × 100 = 10000, bit 4 (jin) and bit 5 (stable).
        #expect(Self.timeline(&jin, until: .seconds(2)).last?.1?.serviceData[BluetoothUUID(0x181D)]?.prefix(3) == [0x30, 0x10, 0x27])
    }

    @Test func theQNBroadcastScalePutsItsAddressAndWeightInManufacturerData() throws {
        var scale = BroadcastScalePeripheral(QNBroadcastScaleDevice(), weightKilograms: 72.35, address: Self.address)
        let seen = Self.timeline(&scale, until: .seconds(2))
        let frames = seen.compactMap { $0.1?.manufacturerData[0xFFFF] }
        // AA BB, the address most significant first, 7 zeros, status (0x20 stable), 0, weight in
        // 0.01 kg little-endian (7190, 7235).
        let head: [UInt8] = [0xAA, 0xBB, 0xD4, 0x12, 0x3A, 0x00, 0x18, 0x1D, 0, 0, 0, 0, 0, 0, 0]
        #expect(frames == [head + [0x00, 0x00, 0x16, 0x1C], head + [0x00, 0x00, 0x43, 0x1C], head + [0x20, 0x00, 0x43, 0x1C]])
        #expect(seen.last?.1?.localName == nil && seen.last?.1?.serviceUUIDs == [])
        scale.stepOff()
        _ = scale.advance(to: .seconds(3))
        if case .legacy(let data, _) = scale.advertising.form {
            #expect(try AdvertisingData.parse(data, connectable: false).manufacturerData[0xFFFF]?.suffix(4) == [0x00, 0x00, 0x00, 0x00])
        }
    }

    @Test func underManualArrivalABroadcasterSleepsUntilSteppedOn() {
        var scale = BroadcastScalePeripheral(QNBroadcastScaleDevice(), weightKilograms: 60, address: Self.address, arrival: .manual)
        #expect(Self.timeline(&scale, until: .seconds(5)).isEmpty && !scale.isAdvertising)
        scale.stepOn()
        let seen = Self.timeline(&scale, until: .seconds(7), from: .seconds(5))
        #expect(seen.map(\.0) == [.seconds(5), .milliseconds(5300), .milliseconds(5700), .milliseconds(6100)])
        #expect(scale.isAdvertising && scale.display == .init(kilograms: 60, stable: true))
    }
}
