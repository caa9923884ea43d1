import HAL
import HALFakes
import MirrorV1
import Testing

/// The mirror profile's UUIDs and names, which live with its driver (HAL knows no profile's).
@Suite struct MirrorGATTTests {
    @Test func uuidsAreTheProfilesOwn() {
        #expect(MirrorGATT.service.description == "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00")
        #expect(MirrorGATT.uuid(0x05) == BluetoothUUID(string: "7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00"))
        #expect(BluetoothUUID(high: 0x0000_181D_0000_1000, low: 0x8000_0080_5F9B_34FB) == BluetoothUUID(0x181D))
    }

    @Test func theFakeMirrorSpellsTheSameServiceFromTheSpec() {
        #expect(MirrorScript.serviceUUID == MirrorGATT.service)
    }

    @Test func theMirrorProfileNamesAsItsSpecTableDoes() {
        let table = BluetoothNames(profiles: MirrorGATT.names)
        let names = (0x02...0x09).map { table.name(of: MirrorGATT.uuid(UInt8($0))) }
        #expect(names == ["deviceInfo", "init", "scanToken", "scanState", "scale", "alignment", "control", "result"])
        #expect(table.name(of: MirrorGATT.service) == "Body-scan Mirror")
        #expect(table.qualifiedName(of: MirrorGATT.uuid(0x05)) == "mirror scanState", "a bare scanState says nothing of whose it is")
        #expect(table.qualifiedName(of: MirrorGATT.service) == "Body-scan Mirror")
        #expect(table.entry(for: MirrorGATT.uuid(0x08))?.profile == "mirror")
        let uuids = table.all.map(\.uuid)
        #expect(Set(uuids).count == uuids.count, "a UUID listed twice would have two names")
    }
}
