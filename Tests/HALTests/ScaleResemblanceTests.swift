import HAL
import Testing

/// Compound rules and the "looks like a scale" table (issue 18, item 4).
@Suite struct ScaleResemblanceTests {
    let ffe0 = BluetoothUUID(0xFFE0)

    @Test func allOfMatchesOnlyWhenEveryPartDoes() {
        let rule = MatchRule.allOf([.serviceUUID(ffe0), .namePrefix("QN-Scale")])
        #expect(rule.matches(.advertisement(Advertisement(localName: "QN-Scale1", serviceUUIDs: [ffe0]))))
        #expect(!rule.matches(.advertisement(Advertisement(localName: "YUNMAI-SIGNAL", serviceUUIDs: [ffe0]))))
        #expect(!rule.matches(.advertisement(Advertisement(localName: "QN-Scale"))))
        #expect(!MatchRule.allOf([]).matches(.advertisement(Advertisement())), "an empty conjunction claims nothing")
        #expect(rule.description == "service FFE0 and name \"QN-Scale…\"")
    }

    @Test func aServiceWithANameOutranksAStandardServiceAlone() {
        let compound = MatchRule.allOf([.serviceUUID(ffe0), .namePrefix("QN")])
        #expect(compound.specificity > MatchRule.serviceUUID(BluetoothUUID(0x181D)).specificity)
        #expect(compound.specificity < MatchRule.serviceData(BluetoothUUID(0x181D)).specificity + 200)
    }

    @Test func anFFB0DeviceResemblesTheLeFuFamily() throws {
        let likeness = try #require(ScaleResemblance.likeness(of: .advertisement(Advertisement(
            localName: "AE BS-06", serviceUUIDs: [BluetoothUUID(0xFFB0)]))))
        #expect(likeness.resemblance.family == "LeFu / ICOMON")
        #expect(likeness.rule == .serviceUUID(BluetoothUUID(0xFFB0)))
        #expect(likeness.hint.contains("service FFB0"))
        #expect(likeness.hint.contains("hwprobe gatt"))
    }

    @Test func theMostSpecificResemblanceWins() throws {
        // FFE0 alone says three families; a Yunmai name narrows it (a longer name prefix
        // outranks nothing, but Yunmai's manufacturer ID outranks the shared service).
        let ad = Advertisement(localName: "YUNMAI-ISM2", serviceUUIDs: [ffe0], manufacturerData: [0x1320: [1, 2]])
        #expect(try #require(ScaleResemblance.likeness(of: .advertisement(ad))).resemblance.family == "Yunmai")
    }

    @Test func aHeartRateStrapLooksLikeNoScale() {
        #expect(ScaleResemblance.likeness(of: .advertisement(Advertisement(localName: "Polar H10",
                                                                           serviceUUIDs: [BluetoothUUID(0x180D)]))) == nil)
        #expect(ScaleResemblance.likeness(of: .usb(USBIdentity(vendor: 0x045E, product: 0x028E))) == nil)
    }
}
