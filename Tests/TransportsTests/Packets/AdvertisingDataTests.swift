import BLEProtocol
import TestKit
import HAL
import Testing
@testable import Transports

@Suite struct AdvertisingDataTests {
    static let mirrorService = BluetoothUUID(string: "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00")

    /// The body-scan mirror as docs/mirror-gatt-v1.md describes it (extended advertising: all four structures).
    static let mirrorAdvertisement = Advertisement(
        flags: 0x06, localName: "Mirror 4F2A", nameIsComplete: true,
        serviceUUIDs: [mirrorService].compactMap { $0 },
        manufacturerData: [0xFFFF: PacketBytes.hex("4D 52 01 2A 4F 00 00")])

    static let mirrorBytes = PacketBytes.hex(
        "02 01 06"
        + " 11 07 00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E 7B"
        + " 0A FF FF FF 4D 52 01 2A 4F 00 00"
        + " 0C 09 4D 69 72 72 6F 72 20 34 46 32 41")

    static func parse(_ hex: String, connectable: Bool = true) throws(HCIParseError) -> Advertisement {
        try AdvertisingData.parse(PacketBytes.hex(hex), connectable: connectable)
    }

    @Test func mirrorAdvertisement() throws {
        #expect(Self.mirrorService != nil)
        let parsed = try AdvertisingData.parse(Self.mirrorBytes)
        #expect(parsed == Self.mirrorAdvertisement)
        #expect(parsed.manufacturerData[0xFFFF]?.prefix(3) == [0x4D, 0x52, 0x01])
        #expect(AdvertisingData.encode(Self.mirrorAdvertisement) == Self.mirrorBytes)
    }

    @Test func miScaleServiceDataAdvertisement() throws {
        // Mi Body Composition Scale 2: name, then a reading as 0x181B service data.
        let ad = try Self.parse("02 01 06 06 09 4D 49 42 46 53 10 16 1B 18 02 A6 E4 07 0B 1D 0F 1E 00 FD 01 9C 3E",
                                connectable: false)
        #expect(ad.localName == "MIBFS" && ad.nameIsComplete)
        #expect(ad.serviceData == [BluetoothUUID(0x181B): PacketBytes.hex("02 A6 E4 07 0B 1D 0F 1E 00 FD 01 9C 3E")])
        #expect(ad.allServiceUUIDs == [BluetoothUUID(0x181B)])
        #expect(!ad.connectable)
        // Mi Smart Scale 2: 0x181D weight data.
        let v1 = try Self.parse("0D 16 1D 18 22 9C 3E E4 07 0B 1D 0F 1E 00")
        #expect(v1.serviceData[BluetoothUUID(0x181D)] == PacketBytes.hex("22 9C 3E E4 07 0B 1D 0F 1E 00"))
    }

    @Test func flagsAndTXPower() throws {
        let ad = try Self.parse("02 01 1A 02 0A F4")
        #expect(ad.flags == 0x1A)
        #expect(ad.txPower == -12)
    }

    @Test func everyUUIDListSize() throws {
        let uuid32 = BluetoothUUID(uint32: 0x1234_5678)
        let vendor = try #require(Self.mirrorService)
        let ad = try Self.parse(
            "05 03 0D 18 1B 18"           // complete 16-bit
            + " 03 02 0F 18"              // incomplete 16-bit
            + " 05 05 78 56 34 12"        // complete 32-bit
            + " 05 04 1D 18 00 00"        // incomplete 32-bit list holding a 16-bit alias
            + " 11 06 00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E 7B")   // incomplete 128-bit
        #expect(ad.serviceUUIDs == [BluetoothUUID(0x180D), BluetoothUUID(0x181B), BluetoothUUID(0x180F), uuid32,
                                    BluetoothUUID(0x181D), vendor])
        #expect(try Self.parse("11 07 00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E 7B").serviceUUIDs == [vendor])
        #expect(try Self.parse("03 03 0D 18 03 03 0D 18").serviceUUIDs == [BluetoothUUID(0x180D)])
    }

    @Test func names() throws {
        let complete = try Self.parse("05 09 53 63 61 6C")
        #expect(complete.localName == "Scal" && complete.nameIsComplete)
        let shortened = try Self.parse("04 08 53 63 61")
        #expect(shortened.localName == "Sca" && !shortened.nameIsComplete)
        // A complete name wins whichever comes first.
        #expect(try Self.parse("05 09 53 63 61 6C 04 08 53 63 61").localName == "Scal")
        #expect(try Self.parse("04 08 53 63 61 05 09 53 63 61 6C").localName == "Scal")
        // Broken UTF-8 is repaired, not refused.
        #expect(try Self.parse("04 09 41 FF 42").localName == "A\u{FFFD}B")
    }

    @Test func serviceDataOfEverySize() throws {
        let vendor = try #require(Self.mirrorService)
        let ad = try Self.parse(
            "05 16 1D 18 AA BB"
            + " 06 20 78 56 34 12 CC"
            + " 13 21 00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E 7B DD EE")
        #expect(ad.serviceData == [BluetoothUUID(0x181D): [0xAA, 0xBB], BluetoothUUID(uint32: 0x1234_5678): [0xCC],
                                   vendor: [0xDD, 0xEE]])
        #expect(try Self.parse("03 16 1D 18").serviceData == [BluetoothUUID(0x181D): []])
    }

    @Test func manufacturerData() throws {
        #expect(try Self.parse("06 FF 4C 00 02 15 01").manufacturerData == [0x004C: [0x02, 0x15, 0x01]])
        #expect(try Self.parse("03 FF 59 00").manufacturerData == [0x0059: []])
    }

    @Test func zeroLengthEndsTheData() throws {
        let ad = try Self.parse("02 01 06 00 00 00 00 00 00")
        #expect(ad.flags == 0x06)
        // Whatever follows the padding is not read.
        #expect(try Self.parse("02 01 06 00 FF FF FF").flags == 0x06)
        #expect(try Self.parse("") == Advertisement())
    }

    @Test func unknownTypesAreSkipped() throws {
        let ad = try Self.parse("03 19 C1 03 02 01 06")   // Appearance, then flags
        #expect(ad.flags == 0x06)
    }

    @Test func malformedStructuresThrow() {
        let bad = [
            "02 01 06 05 09 41 42",          // runs past the end
            "1F",                            // only a length
            "02 01",                         // flags missing their byte
            "01 01",                         // empty flags
            "04 03 0D 18 1B",                // 16-bit list of 3 bytes
            "04 05 01 02 03",                // 32-bit list of 3 bytes
            "10 07 00 1F 2A 3B 4C 5A 6D 9E 1B 4F 2A 3C 01 00 9E",   // 128-bit list of 15 bytes
            "03 0A F4 00",                   // TX power of 2 bytes
            "02 FF 4C",                      // manufacturer data without a whole company ID
            "02 16 1D",                      // 16-bit service data without a whole UUID
            "04 20 78 56 34",                // 32-bit service data without a whole UUID
            "05 21 00 1F 2A 3B",             // 128-bit service data without a whole UUID
        ]
        for hex in bad {
            #expect(throws: HCIParseError.self, "\(hex)") { try Self.parse(hex) }
        }
    }

    @Test func encodeThenParseRoundTrips() throws {
        let vendor = try #require(Self.mirrorService)
        let samples = [
            Self.mirrorAdvertisement,
            Advertisement(),
            Advertisement(flags: 0x04, localName: "MIBFS", nameIsComplete: false, connectable: false),
            Advertisement(serviceUUIDs: [BluetoothUUID(0x181D), BluetoothUUID(0x181B), BluetoothUUID(uint32: 0xABCD_0001), vendor],
                          serviceData: [BluetoothUUID(0x181B): [1, 2, 3], BluetoothUUID(uint32: 0xABCD_0002): [4], vendor: []],
                          manufacturerData: [0x0001: [9], 0xFFFF: []], txPower: -127),
        ]
        for sample in samples {
            let bytes = AdvertisingData.encode(sample)
            #expect(try AdvertisingData.parse(bytes, connectable: sample.connectable) == sample)
            // And back to the very same bytes.
            #expect(AdvertisingData.encode(try AdvertisingData.parse(bytes)) == bytes)
        }
        #expect(AdvertisingData.encode(Advertisement(serviceUUIDs: [BluetoothUUID(uint32: 0x1234_5678)]))
                == PacketBytes.hex("05 05 78 56 34 12"))
    }

    @Test func randomBytesNeverCrashTheParser() {
        var rng = SplitMix64(seed: 31)
        for _ in 0..<5000 {
            let count = Int.random(in: 0...40, using: &rng)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let ad = try? AdvertisingData.parse(bytes) {
                #expect(AdvertisingData.encode(ad).count <= 3 * bytes.count + 3)
            }
        }
    }
}
