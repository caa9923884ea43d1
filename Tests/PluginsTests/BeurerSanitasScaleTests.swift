import BeurerSanitasScale
import HAL
import Testing
import Transports

/// The legacy Beurer / Sanitas frames and opening, from byte fixtures built to openScale's
/// BeurerSanitasHandler.kt.
@Suite struct BeurerSanitasScaleTests {
    @Test func theStartByteFollowsTheModelName() {
        #expect(BeurerSanitasScaleDriver.startByte(forName: "BEURER BF700") == 0xF7, "tested before the BF710's \"bf700\"")
        #expect(BeurerSanitasScaleDriver.startByte(forName: "RT-Libra-W") == 0xF7)
        #expect(BeurerSanitasScaleDriver.startByte(forName: "SANITAS SBF70") == 0xE7)
        #expect(BeurerSanitasScaleDriver.startByte(forName: "BEURER BF710") == 0xE7)
        #expect(BeurerSanitasFrame.alternative(0xE7, 6) == 0xE6)
        #expect(BeurerSanitasFrame.alternative(0xF7, 9) == 0xF9)
    }

    @Test func framesAreReadForTheirModelsStartByteOnly() {
        #expect(BeurerSanitasFrame(parsing: [0xE6, 0x00], startByte: 0xE7) == .initAcknowledged)
        #expect(BeurerSanitasFrame(parsing: [0xE7, 0xF0, 0x4F, 0x00, 55, 0x05, 0x05, 0x01, 0, 0, 0, 0x11], startByte: 0xE7)
                == .statusAcknowledged(battery: 55, unit: 1))
        #expect(BeurerSanitasFrame(parsing: [0xE7, 0xF0, 0x4D, 0x00], startByte: 0xE7) == .unitAcknowledged(accepted: true))
        // 72.35 kg is 1447 units of 50 g: 05 A7.
        #expect(BeurerSanitasFrame(parsing: [0xE7, 0x58, 0x00, 0x05, 0xA7], startByte: 0xE7) == .weight(fiftyGrams: 1447, stable: true))
        #expect(BeurerSanitasFrame(parsing: [0xE7, 0x58, 0x01, 0x05, 0x78], startByte: 0xE7) == .weight(fiftyGrams: 1400, stable: false))
        #expect(BeurerSanitasFrame(parsing: [0xF7, 0x58, 0x00, 0x05, 0xA7], startByte: 0xE7) == nil, "another model's start byte")
        #expect(BeurerSanitasFrame(parsing: [0xE7, 0x58, 0x00, 0x05], startByte: 0xE7) == .other, "a weight frame too short")
        #expect(BeurerSanitasFrame(parsing: [], startByte: 0xE7) == nil)
    }

    @Test func theOpeningSetsTheUnitOnlyWhenItDiffers() throws {
        var scale = BeurerSanitasScaleProtocol(startByte: 0xE7, wantedUnit: .pounds) { 0x692E_6A40 }
        #expect(try scale.subscriptions(available: [BeurerSanitasScaleProtocol.characteristic]) == [BeurerSanitasScaleProtocol.characteristic])
        let c = BeurerSanitasScaleProtocol.characteristic
        #expect(scale.start() == [.write(c, [0xE6, 0x01], withResponse: true, purpose: "init")])
        #expect(scale.received([0xE7, 0x58, 0x00, 0x05, 0xA7], from: c).isEmpty, "no weights before the opening is done")
        #expect(scale.received([0xE6, 0x00], from: c) == [
            .write(c, [0xE9, 0x69, 0x2E, 0x6A, 0x40], withResponse: true, purpose: "the time"),
            .write(c, [0xE7, 0x4F, 0, 0, 0, 0, 0, 0, 0, 0], withResponse: true, purpose: "the status request (4F)"),
        ])
        #expect(scale.received([0xE7, 0xF0, 0x4F, 0x00, 55, 5, 5, 0x01, 0, 0, 0, 0x11], from: c)
                == [.write(c, [0xE7, 0x4D, 0x02], withResponse: true, purpose: "the unit (4D)")])
        #expect(scale.battery == 55)
        #expect(scale.received([0xE7, 0xF0, 0x4D, 0x00], from: c) == [.ready])
        #expect(scale.received([0xE7, 0x58, 0x01, 0x05, 0x78], from: c)
                == [.reading(WeightReading(kilograms: 70.0, stable: false, displayUnit: .pounds))])
        #expect(scale.received([0xE7, 0x58, 0x00, 0x05, 0xA7], from: c)
                == [.reading(WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds))])
    }

    @Test func aScaleAlreadyInTheWantedUnitIsReadyAfterItsStatus() {
        var scale = BeurerSanitasScaleProtocol(startByte: 0xF7, wantedUnit: .kilograms) { 0 }
        let c = BeurerSanitasScaleProtocol.characteristic
        _ = scale.start()
        _ = scale.received([0xF6, 0x00], from: c)
        #expect(scale.received([0xF7, 0xF0, 0x4F, 0x00, 80, 5, 5, 0x01], from: c) == [.ready])
    }

    @Test func byDefaultTheScalesOwnUnitIsLeftAndReported() {
        var scale = BeurerSanitasScaleProtocol(startByte: 0xE7) { 0 }
        let c = BeurerSanitasScaleProtocol.characteristic
        _ = scale.start()
        _ = scale.received([0xE6, 0x00], from: c)
        #expect(scale.received([0xE7, 0xF0, 0x4F, 0x00, 80, 5, 5, 0x02], from: c) == [.ready], "pounds, and no 4D")
        #expect(scale.received([0xE7, 0x58, 0x00, 0x05, 0xA7], from: c)
                == [.reading(WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds))])
    }

    @Test func aRefusedUnitEndsTheOpening() {
        var scale = BeurerSanitasScaleProtocol(startByte: 0xE7, wantedUnit: .pounds) { 0 }
        let c = BeurerSanitasScaleProtocol.characteristic
        _ = scale.start()
        _ = scale.received([0xE6, 0x00], from: c)
        _ = scale.received([0xE7, 0xF0, 0x4F, 0x00, 55, 5, 5, 0x01], from: c)
        guard case .fail(.handshakeFailed)? = scale.received([0xE7, 0xF0, 0x4D, 0x01], from: c).first else {
            Issue.record("a refused unit should end the opening")
            return
        }
    }
}
