import HAL
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func sixteenBitUUIDsPrintAsFourUpperCaseDigits() {
        #expect(BluetoothUUID(0x181D).description == "181D")
        #expect(BluetoothUUID(0x2a9c).description == "2A9C")
    }

    @Test func sixteenBitUUIDEqualsItsBaseUUIDSpelling() throws {
        let long = try #require(BluetoothUUID(string: "0000181d-0000-1000-8000-00805f9b34fb"))
        #expect(long == BluetoothUUID(0x181D))
        #expect(long.shortValue == 0x181D)
        #expect(long.description == "181D")
    }

    @Test func vendorUUIDsPrintCanonicalUpperCase() throws {
        let uuid = try #require(BluetoothUUID(string: "7b9e0001-3c2a-4f1b-9e6d-5a4c3b2a1f00"))
        #expect(uuid.description == "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00")
        #expect(uuid.shortValue == nil)
    }

    @Test func airBytesAreLittleEndian() throws {
        #expect(BluetoothUUID(littleEndian: [0x1D, 0x18]) == BluetoothUUID(0x181D))
        #expect(BluetoothUUID(0x181D).littleEndianBytes == [0x1D, 0x18])
        let mirror = try #require(BluetoothUUID(string: "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"))
        #expect(mirror.littleEndianBytes.first == 0x00)
        #expect(mirror.littleEndianBytes.last == 0x7B)
        #expect(BluetoothUUID(littleEndian: mirror.littleEndianBytes) == mirror)
        #expect(BluetoothUUID(littleEndian: [0x01, 0x02, 0x03]) == nil)
    }

    @Test func rejectsMalformedText() {
        for bad in ["", "18", "181G", "0000181d-0000-1000-8000-00805f9b34f", "7B9E00013C2A4F1B9E6D5A4C3B2A1F00X", "+18D", "18+D"] {
            #expect(BluetoothUUID(string: bad) == nil, "\(bad)")
        }
    }
}

@Suite struct BLEAddressTests {
    @Test func parsesWithOptionalKind() throws {
        let plain = try #require(BLEAddress(string: "aa:bb:cc:dd:ee:ff"))
        #expect(plain.description == "AA:BB:CC:DD:EE:FF")
        #expect(plain.kind == .public)
        #expect(BLEAddress(string: "C0:FF:EE:00:4F:2A/random")?.kind == .random)
        #expect(BLEAddress(string: "C0:FF:EE:00:4F:2A/PUBLIC")?.kind == .public)
    }

    @Test func rejectsMalformed() {
        for bad in ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:GG", "AA:BB:CC:DD:EE:FF/other", "A:BB:CC:DD:EE:FF",
                    "+A:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:-F"] {
            #expect(BLEAddress(string: bad) == nil, "\(bad)")
        }
    }

    @Test func hciOrderIsReversed() {
        let address = BLEAddress(littleEndian: [0x2A, 0x4F, 0x00, 0xEE, 0xFF, 0xC0], kind: .random)
        #expect(address?.description == "C0:FF:EE:00:4F:2A")
    }
}

@Suite struct AdvertisementTests {
    @Test func scanResponseMergesIntoAdvertisement() {
        let ad = Advertisement(flags: 0x06, serviceUUIDs: [BluetoothUUID(0x181D)], manufacturerData: [0xFFFF: [1]])
        let response = Advertisement(localName: "Mirror 4F2A", serviceUUIDs: [BluetoothUUID(0x181D), BluetoothUUID(0x180F)])
        let merged = ad.merging(response)
        #expect(merged.localName == "Mirror 4F2A")
        #expect(merged.flags == 0x06)
        #expect(merged.serviceUUIDs == [BluetoothUUID(0x181D), BluetoothUUID(0x180F)])
        #expect(merged.manufacturerData[0xFFFF] == [1])
    }

    @Test func completeNameBeatsShortened() {
        let complete = Advertisement(localName: "MIBFS Scale", nameIsComplete: true)
        let shortened = Advertisement(localName: "MIBFS", nameIsComplete: false)
        #expect(complete.merging(shortened).localName == "MIBFS Scale")
        #expect(shortened.merging(complete).localName == "MIBFS Scale")
    }

    @Test func allServicesListsServiceDataTooOnce() {
        let ad = Advertisement(serviceUUIDs: [BluetoothUUID(0x181B)], serviceData: [BluetoothUUID(0x181B): [0], BluetoothUUID(0x181D): [1]])
        #expect(ad.allServiceUUIDs == [BluetoothUUID(0x181B), BluetoothUUID(0x181D)])
    }
}
