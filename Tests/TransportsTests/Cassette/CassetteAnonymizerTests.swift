import BLEProtocol
import Foundation
import HAL
import Testing
@testable import Transports

/// `--anonymize`: addresses, names and serial numbers replaced, the same one the same way, with
/// lengths and address types kept so the cassette still reads and replays.
@Suite struct CassetteAnonymizerTests {
    static func fixture(_ name: String) throws -> BLECassette {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cassettes/\(name).cassette").path
        return try CassetteReader.read(path: path)
    }

    @Test func theSimulatedBenchLosesItsAddressesNamesAndSerialButKeepsItsShape() throws {
        let original = try Self.fixture("sim-scale-gatt")
        let anonymized = CassetteAnonymizer.anonymize(original)
        let text = CassetteFormat.text(of: anonymized)
        let originalText = CassetteFormat.text(of: original)
        for secret in ["C0:FF:EE:00:4F:2A", "D4:12:3A:00:18:1D", hex("Bench Scale"), hex("Mirror 4F2A")] {
            #expect(originalText.contains(secret), "the fixture has \(secret)")
            #expect(!text.contains(secret), "\(secret) is still there")
        }
        // A static random address stays static random (top bits 11), a public one public.
        let addresses = anonymized.peripherals.map(\.address)
        #expect(addresses.map(\.kind) == original.peripherals.map(\.address.kind))
        #expect(addresses.contains { $0.kind == .random && $0.bytes[0] & 0xC0 == 0xC0 })
        #expect(Set(addresses).count == addresses.count)
        // Every record keeps its length, and what is not identifying stays as it was.
        for (before, after) in zip(original.peripherals, anonymized.peripherals) {
            #expect(before.advertising.map(\.data.count) == after.advertising.map(\.data.count))
            #expect(before.connections.map { $0.att.map(\.pdu.count) } == after.connections.map { $0.att.map(\.pdu.count) })
            #expect(before.connections.map { $0.att.map(\.at) } == after.connections.map { $0.att.map(\.at) })
        }
        // The name advertised and the one read from Device Name get the same replacement.
        let scale = try #require(anonymized.peripherals.first { $0.address.kind == .public })
        let advertisedName = try #require(scale.advertising.first.flatMap { try? AdvertisingData.parse($0.data, connectable: true).localName })
        #expect(advertisedName == "device-2---", "the mirror, first by address, is device-1")
        let readName = scale.connections.first?.att.first { $0.direction == .fromPeripheral && $0.pdu == [0x0B] + Array(advertisedName.utf8) }
        #expect(readName != nil, "the Device Name read says \(advertisedName) too")
        #expect(Set(try CassetteReader.read(Array(text.utf8)).peripherals) == Set(anonymized.peripherals), "still a good cassette")
        // The same input, the same output.
        #expect(CassetteAnonymizer.anonymize(original) == anonymized)
    }

    /// Issue 27, item 5: the address inside values (manufacturer data least significant byte
    /// first, service data most significant first, a notification), System ID, and a serial that a
    /// rule names in manufacturer data are all replaced.
    @Test func anAddressInsideValuesSystemIDAndANamedSerialAreReplaced() throws {
        let text = """
            hwprobe-cassette 1.0
            device ble 11:22:33:44:55:66 public
            adv 0.100000 ind -50 09ff5701665544332211091695fe112233445566
            adv 0.100100 scan-rsp -50 0affffff4d5201a1b2c3d4
            connection 0.200000
            att 0.001000 > 08010005000328
            att 0.002000 < 09070200020300232a
            att 0.003000 > 0a0300
            att 0.004000 < 0b665544feff332211
            att 0.005000 < 1b0500665544332211
            end 9

            """
        let original = try CassetteReader.read(Array(text.utf8))
        let fields = [CassetteAnonymizer.ManufacturerField(companyID: 0xFFFF, prefix: [0x4D, 0x52], range: 3..<7)]
        let anonymized = CassetteFormat.text(of: CassetteAnonymizer.anonymize(original, manufacturerFields: fields)).lowercased()
        for secret in ["665544332211", "112233445566", "665544feff332211", "a1b2c3d4"] {
            #expect(!anonymized.contains(secret), "\(secret) is still in \(anonymized)")
        }
        // The replacement address, in the same byte orders.
        #expect(anonymized.contains("09ff5701010000000000"), "\(anonymized)")
        #expect(anonymized.contains("091695fe000000000001"), "\(anonymized)")
        #expect(anonymized.contains("0affffff4d520100000001"), "\(anonymized)")
    }

    func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }
}
