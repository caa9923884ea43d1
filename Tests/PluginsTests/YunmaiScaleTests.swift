import HAL
import Testing
import Transports
import YunmaiScale

/// Yunmai frames and commands, from byte fixtures built to openScale's BluetoothYunmaiSE_Mini.java.
@Suite struct YunmaiScaleTests {
    /// A measurement notification: `0D`, version, …, type at 3, time at 5, weight at 13,
    /// resistance at 15, fat at 17 (all BE); 20 bytes.
    func frame(type: UInt8, version: UInt8 = 0x1E, kgHundredths: UInt16 = 7235, resistance: UInt16 = 512,
               fatHundredths: UInt16 = 1840) -> [UInt8] {
        var bytes: [UInt8] = [0x0D, version, 0x14, type, 0x00, 0x69, 0x2E, 0x6A, 0x40] + Array(repeating: 0, count: 11)
        bytes[13] = UInt8(kgHundredths >> 8); bytes[14] = UInt8(kgHundredths & 0xFF)
        bytes[15] = UInt8(resistance >> 8); bytes[16] = UInt8(resistance & 0xFF)
        bytes[17] = UInt8(fatHundredths >> 8); bytes[18] = UInt8(fatHundredths & 0xFF)
        return bytes
    }

    @Test func aFinalFrameCarriesWeightResistanceAndTheScalesFat() {
        #expect(YunmaiFrame(parsing: frame(type: 2)) == .final(weightHundredths: 7235, resistance: 512, fatHundredths: 1840))
        #expect(YunmaiFrame(parsing: frame(type: 2, version: 0x1D)) == .final(weightHundredths: 7235, resistance: 512, fatHundredths: nil),
                "older versions send no fat of their own")
        #expect(YunmaiFrame(parsing: frame(type: 1)) == .live)
        #expect(YunmaiFrame(parsing: Array(frame(type: 2).prefix(18))) == nil)
    }

    @Test func commandsAreSealedWithTheXORAfterTheLeadingByte() {
        let user = YunmaiFrame.user(id: 0x0102, heightCm: 170, male: true, age: 30, unit: .kilograms)
        #expect(user.count == 0x12, "the length byte counts the whole command")
        #expect(Array(user.prefix(17)) == [0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, 0x01, 0x02, 170, 1, 30, 0x55, 0x5A, 0x00, 0x00, 1, 3])
        #expect(user.last == user.dropFirst().dropLast().reduce(0, ^))
        let time = YunmaiFrame.time(unixSeconds: 0x692E_6A40)
        #expect(time.count == 0x0D, "13 bytes, as BluetoothYunmaiSE_Mini.java sends and its length byte says")
        #expect(Array(time.prefix(7)) == [0x0D, 0x0D, 0x11, 0x69, 0x2E, 0x6A, 0x40])
        #expect(YunmaiFrame.start == [0x0D, 0x05, 0x13, 0x00, UInt8(0x05 ^ 0x13 ^ 0x00)], "start, sealed like the others")
    }

    @Test func theConversation() throws {
        var yunmai = YunmaiScaleProtocol(person: .init(id: 7, heightCm: 182, male: false, age: 44), displayUnit: .pounds) { 0x692E_6A40 }
        #expect(try yunmai.subscriptions(available: [YunmaiScaleProtocol.measurements, YunmaiScaleProtocol.commands]) == [YunmaiScaleProtocol.measurements])
        let opening = yunmai.start()
        #expect(opening.count == 4)
        #expect(opening.last == .ready)
        if case .write(YunmaiScaleProtocol.commands, let user, true, _) = opening[0] {
            #expect(user[6...10] == [0, 7, 182, 2, 44])
            #expect(user[15] == 2, "pounds")
        } else {
            Issue.record("the user comes first: \(opening)")
        }
        #expect(yunmai.received(frame(type: 1, kgHundredths: 7000), from: YunmaiScaleProtocol.measurements).isEmpty, "live updates are not read")
        #expect(yunmai.received(frame(type: 2), from: YunmaiScaleProtocol.measurements)
                == [.reading(WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds, bodyFatPercent: 18.4))])
        #expect(throws: ScaleError.self) { try yunmai.subscriptions(available: [YunmaiScaleProtocol.measurements]) }
    }
}
