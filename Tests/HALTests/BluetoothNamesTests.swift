import Foundation
import HAL
import Testing

/// The one table of UUID names (`gatt` and `-v` both word UUIDs through it).
@Suite struct BluetoothNamesTests {
    @Test func theSIGNamesOfWhatThisBenchMeets() {
        let expected: [(UInt16, String)] = [
            (0x1800, "Generic Access"), (0x1801, "Generic Attribute"), (0x180A, "Device Information"), (0x180F, "Battery"),
            (0x181D, "Weight Scale"), (0x181B, "Body Composition"), (0x1805, "Current Time"), (0x181C, "User Data"),
            (0x2A00, "Device Name"), (0x2A01, "Appearance"), (0x2A05, "Service Changed"), (0x2A19, "Battery Level"),
            (0x2A29, "Manufacturer Name String"), (0x2A2B, "Current Time"), (0x2A9B, "Body Composition Feature"),
            (0x2A9C, "Body Composition Measurement"), (0x2A9D, "Weight Measurement"), (0x2A9E, "Weight Scale Feature"),
            (0x2A9A, "User Index"), (0x2A9F, "User Control Point"), (0x2B29, "Client Supported Features"), (0x2B2A, "Database Hash"),
            (0x2900, "Characteristic Extended Properties"), (0x2901, "Characteristic User Description"),
            (0x2902, "Client Characteristic Configuration"), (0x2904, "Characteristic Presentation Format"),
            (0x2800, "Primary Service"), (0x2803, "Characteristic"),
        ]
        for (uuid, name) in expected {
            #expect(BluetoothNames.standard.name(of: BluetoothUUID(uuid)) == name, "\(BluetoothUUID(uuid))")
            #expect(BluetoothNames.standard.qualifiedName(of: BluetoothUUID(uuid)) == name, "the SIG's names stand alone")
        }
    }

    @Test func aSixteenBitUUIDSpelledInFullHasTheSameName() throws {
        let full = try #require(BluetoothUUID(string: "00002A9D-0000-1000-8000-00805F9B34FB"))
        #expect(BluetoothNames.standard.name(of: full) == "Weight Measurement")
    }

    @Test func aProfilesNamesCarryTheProfileUnlessTheyStandAlone() throws {
        let service = try #require(BluetoothUUID(string: "A5C30001-6B1E-4F2A-9D3C-2B7E5F10C4A9"))
        let value = try #require(BluetoothUUID(string: "A5C30002-6B1E-4F2A-9D3C-2B7E5F10C4A9"))
        let names = BluetoothNames(profiles: [
            .init(uuid: service, name: "Test Service", profile: "test", standsAlone: true),
            .init(uuid: value, name: "level", profile: "test"),
            .init(uuid: BluetoothUUID(0x2A19), name: "not the SIG's", profile: "test"),
        ])
        #expect(names.name(of: value) == "level")
        #expect(names.qualifiedName(of: value) == "test level", "a bare name says nothing of whose it is")
        #expect(names.qualifiedName(of: service) == "Test Service")
        #expect(names.entry(for: value)?.profile == "test")
        #expect(names.name(of: BluetoothUUID(0x2A19)) == "Battery Level", "the SIG's name is listed first and kept")
        #expect(BluetoothNames.standard.name(of: value) == nil, "HAL's own table knows no profile")
    }

    @Test func eachUUIDIsNamedOnceAndNothingElseIsNamed() throws {
        let uuids = BluetoothNames.standard.all.map(\.uuid)
        #expect(Set(uuids).count == uuids.count, "a UUID listed twice would have two names")
        #expect(BluetoothNames.standard.all.allSatisfy { !$0.name.isEmpty && $0.name == $0.name.trimmingCharacters(in: .whitespaces) })
        // The SIG's own entries are all 16-bit assigned numbers.
        #expect(BluetoothNames.standard.all.filter { $0.profile == nil }.allSatisfy { $0.uuid.shortValue != nil })
        #expect(BluetoothNames.standard.name(of: try #require(BluetoothUUID(string: "A5C30002-6B1E-4F2A-9D3C-2B7E5F10C4A9"))) == nil)
        #expect(BluetoothNames.standard.name(of: BluetoothUUID(0x2A0B)) == nil, "0x2A0B is not assigned")
    }
}
