import HAL
import IcomonScale
import Testing
import Transports

/// The LeFu / ICOMON (MGB) frames and configuration, from byte fixtures built to the layout of
/// openScale's BluetoothMGB.java.
@Suite struct IcomonScaleTests {
    /// A first result frame: `AC 02 FF`, `00 02 21`, date and time, weight, BMI, fat (tenths, BE), `00 00`.
    func result(weight: UInt16, bmi: UInt16 = 228, fat: UInt16 = 184, second: UInt8 = 0x02) -> [UInt8] {
        [0xAC, second, 0xFF, 0x00, 0x02, 0x21, 25, 12, 2, 3, 4, 5,
         UInt8(weight >> 8), UInt8(weight & 0xFF), UInt8(bmi >> 8), UInt8(bmi & 0xFF), UInt8(fat >> 8), UInt8(fat & 0xFF), 0, 0]
    }

    let composition: [UInt8] = [0x01, 0x00, 0x01, 0xC4, 0x06, 0x40, 0x00, 0x1E, 0x02, 0x12, 30, 0x00, 0xB4,
                                0x00, 0x01, 0x1B, 0xA5, 0x02, 0x47, 0x00]

    @Test func theFirstFrameCarriesWeightBMIAndFatBigEndian() {
        // 72.3 kg is 723 tenths, 02 D3: read little-endian it would be 5398.6 kg.
        #expect(IcomonFrame(parsing: result(weight: 723)) == .result(weightTenths: 723, bmiTenths: 228, fatTenths: 184))
        #expect(IcomonFrame(parsing: result(weight: 723, second: 0x03)) != nil, "MGBHandler.kt's AC 03 FF variant")
    }

    @Test func theSecondFrameCarriesMuscleBoneAndWater() {
        #expect(IcomonFrame(parsing: composition) == .composition(muscleTenths: 452, boneTenths: 30, waterTenths: 530))
    }

    @Test func otherValuesAreNotResultFrames() {
        #expect(IcomonFrame(parsing: Array(result(weight: 723).prefix(19))) == nil, "19 bytes")
        #expect(IcomonFrame(parsing: result(weight: 723) + [0]) == nil, "21 bytes")
        var header = result(weight: 723)
        header[2] = 0xFE
        #expect(IcomonFrame(parsing: header) == nil)
        #expect(IcomonFrame(parsing: []) == nil)
    }

    @Test func configurationPacketsAreFramedWithTheirChecksum() {
        // AC 02, the four bytes, CC, and the low byte of their sum with CC.
        #expect(IcomonFrame.configuration(0xF7, 0, 0, 0) == [0xAC, 0x02, 0xF7, 0x00, 0x00, 0x00, 0xCC, 0xC3])
        #expect(IcomonFrame.configuration(0xFB, 1, 30, 170) == [0xAC, 0x02, 0xFB, 0x01, 0x1E, 0xAA, 0xCC, 0x90])
    }

    func logic(unit: WeightUnit = .kilograms) -> IcomonScaleProtocol {
        IcomonScaleProtocol(person: .init(male: false, age: 41, heightCm: 165), displayUnit: unit) {
            .init(year: 2026, month: 12, day: 2, hour: 3, minute: 15, second: 9)
        }
    }

    @Test func theOpeningIsTheSixConfigurationWritesThenReady() throws {
        var mgb = logic(unit: .pounds)
        #expect(try mgb.subscriptions(available: [IcomonScaleProtocol.configuration, IcomonScaleProtocol.results])
                == [IcomonScaleProtocol.results])
        let opening = mgb.start()
        let written = opening.compactMap { action -> [UInt8]? in
            if case .write(IcomonScaleProtocol.configuration, let value, true, _) = action { value } else { nil }
        }
        #expect(written.map { Array($0[2...5]) } == [[0xF7, 0, 0, 0], [0xFA, 0, 0, 0], [0xFB, 2, 41, 165], [0xFD, 26, 12, 2],
                                                    [0xFC, 3, 15, 9], [0xFE, 6, 2, 0]])
        #expect(opening.last == .ready)
    }

    @Test func aResultBecomesOneStableReadingWithTheScalesBodyFat() {
        var mgb = logic()
        #expect(mgb.received(result(weight: 723), from: IcomonScaleProtocol.results)
                == [.reading(WeightReading(kilograms: 72.3, stable: true, bodyFatPercent: 18.4))])
        #expect(mgb.received(composition, from: IcomonScaleProtocol.results).isEmpty)
        #expect(mgb.received(result(weight: 0), from: IcomonScaleProtocol.results).isEmpty, "an empty scale is no reading")
        #expect(mgb.received(result(weight: 723), from: IcomonScaleProtocol.configuration).isEmpty)
    }

    @Test func aScaleWithoutFFB1IsUnsupported() {
        var mgb = logic()
        #expect(throws: ScaleError.self) { try mgb.subscriptions(available: [IcomonScaleProtocol.results]) }
    }
}
