import HAL
import OneByoneScale
import Testing
import Transports

/// The 1byone / Eufy frames and conversation, from byte fixtures built to the layout of
/// openScale's OneByoneHandler.kt.
@Suite struct OneByoneScaleTests {
    /// A `CF` frame: impedance (tenths of an ohm, low byte first as the handler reads it),
    /// weight LE hundredths, byte 9 = 1 when there is no impedance; 11 bytes.
    func measurement(kgHundredths: UInt16, impedanceTenths: UInt16?) -> [UInt8] {
        let z = impedanceTenths ?? 0
        return [0xCF, UInt8(z & 0xFF), UInt8(z >> 8), UInt8(kgHundredths & 0xFF), UInt8(kgHundredths >> 8),
                0, 0, 0, 0, impedanceTenths == nil ? 1 : 0, 0]
    }

    @Test func aMeasurementFrameCarriesWeightAndImpedance() {
        #expect(OneByoneFrame(parsing: measurement(kgHundredths: 7235, impedanceTenths: 5003))
                == .measurement(weightHundredths: 7235, impedanceTenths: 5003))
        #expect(OneByoneFrame(parsing: measurement(kgHundredths: 7000, impedanceTenths: nil))
                == .measurement(weightHundredths: 7000, impedanceTenths: nil))
        #expect(OneByoneFrame(parsing: Array(measurement(kgHundredths: 1, impedanceTenths: nil).prefix(10))) == nil, "10 bytes")
        #expect(OneByoneFrame(parsing: [0xF1, 0x00]) == .clockAcknowledged)
        #expect(OneByoneFrame(parsing: [0xF2, 0x00]) == .endOfStoredMeasurements)
        #expect(OneByoneFrame(parsing: [0xF2]) == nil)
    }

    @Test func commandsAreBuiltAsTheHandlerBuildsThem() {
        let kg = OneByoneFrame.unitSetting(.kilograms)
        #expect(kg == [0xFD, 0x37, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xFD ^ 0x37 ^ 0x01])
        #expect(OneByoneFrame.unitSetting(.pounds)[2] == 0x01)
        #expect(OneByoneFrame.clock(year: 2026, month: 12, day: 2, hour: 3, minute: 15, second: 9)
                == [0xF1, 0x07, 0xEA, 12, 2, 3, 15, 9])
    }

    func logic() -> OneByoneScaleProtocol {
        OneByoneScaleProtocol { .init(year: 2026, month: 12, day: 2, hour: 3, minute: 15, second: 9) }
    }

    @Test func theConversationReadsPastStoredMeasurementsWithoutErasingThem() throws {
        var scale = logic()
        #expect(try scale.subscriptions(available: [OneByoneScaleProtocol.frames, OneByoneScaleProtocol.commands]) == [OneByoneScaleProtocol.frames])
        #expect(scale.start().count == 2)
        #expect(scale.awaiting == "the scale's F1 00 acknowledgement of the clock")
        // A live-looking frame before the acknowledgement is no reading.
        #expect(scale.received(measurement(kgHundredths: 7235, impedanceTenths: 5003), from: OneByoneScaleProtocol.frames).isEmpty)
        #expect(scale.received([0xF1, 0x00], from: OneByoneScaleProtocol.frames)
                == [.write(OneByoneScaleProtocol.commands, [0xF2, 0x00], withResponse: true, purpose: "the request for stored measurements (F2 00)")])
        // Stored measurements are counted and passed over, not readings of the person now.
        #expect(scale.received(measurement(kgHundredths: 8100, impedanceTenths: 4800) + Array(repeating: 0, count: 7),
                               from: OneByoneScaleProtocol.frames).isEmpty)
        #expect(scale.storedMeasurements == 1)
        let end = scale.received([0xF2, 0x00], from: OneByoneScaleProtocol.frames)
        #expect(end == [.ready], "and no F2 01: the history stays on the scale")
        #expect(scale.received(measurement(kgHundredths: 7000, impedanceTenths: nil), from: OneByoneScaleProtocol.frames)
                == [.reading(WeightReading(kilograms: 70.0, stable: nil))])
        #expect(scale.received(measurement(kgHundredths: 7235, impedanceTenths: 5003), from: OneByoneScaleProtocol.frames)
                == [.reading(WeightReading(kilograms: 72.35, stable: true, impedanceOhms: 500.3))])
    }

    @Test func missingCharacteristicsAreUnsupported() {
        var scale = logic()
        #expect(throws: ScaleError.self) { try scale.subscriptions(available: [OneByoneScaleProtocol.frames]) }
    }
}
