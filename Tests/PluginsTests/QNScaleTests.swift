import HAL
import QNScale
import Testing
import Transports

/// The QN / Yolanda frames and conversation, from byte fixtures: the captures quoted in
/// openScale's BluetoothQNScale.java, and frames built to the layout its QNHandler.kt reads.
@Suite struct QNScaleTests {
    /// `frame(0x10, 0x15, [...])`: opcode, whole length, protocol type, body, checksum.
    func frame(_ opcode: UInt8, _ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        let head: [UInt8] = [opcode, UInt8(body.count + 4), type] + body
        return head + [QNFrame.checksum(head)]
    }

    /// A 0x12 information frame (hundredths when `hundredths`).
    func information(_ type: UInt8 = 0x15, hundredths: Bool = true) -> [UInt8] {
        frame(0x12, type, [0, 0, 0, 0, 0, 0, 0, hundredths ? 1 : 0, 0, 0, 0])
    }

    func weight(_ raw: UInt16, stable: Bool, type: UInt8 = 0x15) -> [UInt8] {
        frame(0x10, type, [UInt8(raw >> 8), UInt8(raw & 0xFF), stable ? 1 : 0, 0x01, 0xF4, 0x01, 0xF0, 0, 0])
    }

    @Test func capturedFramesPassTheLengthAndChecksumChecks() throws {
        // From the comments of BluetoothQNScale.java: the FFE2 indication and the app's writes.
        #expect(try QNFrame(parsing: [0x21, 0x05, 0x15, 0x01, 0x3C]) == .other(opcode: 0x21))
        #expect(QNFrame.checksum([0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x00]) == 0x42)
        #expect(QNFrame.checksum([0x20, 0x08, 0x15, 0x68, 0xDF, 0x40, 0x23]) == 0xE7)
    }

    @Test func theUnitSettingMatchesTheCapture() {
        #expect(QNFrame.unitSetting(protocolType: 0x15, unit: .kilograms) == [0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x00, 0x42])
        #expect(QNFrame.unitSetting(protocolType: 0x15, unit: .pounds).suffix(6).first == 0x02)
    }

    @Test func theTimeSettingMatchesTheCapture() {
        // 0x2340DF68 seconds after 2000-01-01 00:00 UTC.
        let unix = QNFrame.epochOffset + 0x2340_DF68
        #expect(QNFrame.timeSetting(protocolType: 0x15, unixSeconds: unix) == [0x20, 0x08, 0x15, 0x68, 0xDF, 0x40, 0x23, 0xE7])
    }

    @Test func aWeightFrameCarriesWeightStableFlagAndResistances() throws {
        #expect(try QNFrame(parsing: weight(7235, stable: true))
                == .weight(protocolType: 0x15, raw: 7235, stable: true, resistance1: 0x01F4, resistance2: 0x01F0))
        guard case .weight(_, _, let stable, _, _) = try QNFrame(parsing: weight(7000, stable: false)) else {
            Issue.record("not a weight frame")
            return
        }
        #expect(!stable)
    }

    @Test func brokenFramesAreRefusedWithTheReason() {
        var bad = weight(7235, stable: true)
        bad[bad.count - 1] &+= 1
        #expect(throws: QNParseError.checksum(expected: bad[bad.count - 1] &- 1, found: bad[bad.count - 1])) { try QNFrame(parsing: bad) }
        #expect(throws: QNParseError.lengthMismatch(declared: 13, actual: 12)) { try QNFrame(parsing: Array(weight(1, stable: true).dropLast())) }
        #expect(throws: QNParseError.tooShort(2)) { try QNFrame(parsing: [0x10, 0x02]) }
        #expect(throws: QNParseError.tooShortFor(opcode: 0x10, count: 6, needed: 10)) { try QNFrame(parsing: frame(0x10, 0x15, [1, 2])) }
    }

    func logic(unit: WeightUnit = .kilograms) -> QNScaleProtocol {
        QNScaleProtocol(displayUnit: unit) { QNFrame.epochOffset + 0x2340_DF68 }
    }

    @Test func theConversationOnTheFFE0Layout() throws {
        var qn = logic()
        #expect(try qn.subscriptions(available: [QNScaleProtocol.ffe1Frames, QNScaleProtocol.ffe2Indications,
                                                 QNScaleProtocol.ffe3Unit, QNScaleProtocol.ffe4Time])
                == [QNScaleProtocol.ffe1Frames, QNScaleProtocol.ffe2Indications])
        #expect(qn.start().isEmpty, "the scale speaks first")
        #expect(qn.awaiting == "the scale's 0x12 information frame")
        // Nothing counts before the 0x12 frame but the frame itself.
        #expect(qn.received(information(), from: QNScaleProtocol.ffe1Frames)
                == [.write(QNScaleProtocol.ffe3Unit, [0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x00, 0x42], withResponse: true,
                           purpose: "the unit setting (0x13)")])
        #expect(qn.received(information(), from: QNScaleProtocol.ffe1Frames).isEmpty, "the unit is set once")
        #expect(qn.received(frame(0x14, 0x15, [0, 0, 0, 0, 0, 0, 0]), from: QNScaleProtocol.ffe1Frames)
                == [.write(QNScaleProtocol.ffe4Time, [0x20, 0x08, 0x15, 0x68, 0xDF, 0x40, 0x23, 0xE7], withResponse: true,
                           purpose: "the time setting (0x20)"), .ready])
        #expect(qn.received(weight(7000, stable: false), from: QNScaleProtocol.ffe1Frames)
                == [.reading(WeightReading(kilograms: 70.0, stable: false))])
        #expect(qn.received(weight(7235, stable: true), from: QNScaleProtocol.ffe1Frames)
                == [.reading(WeightReading(kilograms: 72.35, stable: true))])
        #expect(qn.received(weight(7235, stable: true), from: QNScaleProtocol.ffe2Indications).isEmpty, "frames come on FFE1 only")
    }

    @Test func theFFF0LayoutWritesEverythingToFFF2AndDividesTenthsAgain() throws {
        var qn = logic(unit: .pounds)
        #expect(try qn.subscriptions(available: [QNScaleProtocol.fff1Frames, QNScaleProtocol.fff2Commands]) == [QNScaleProtocol.fff1Frames])
        let unit = qn.received(information(0xFF, hundredths: false), from: QNScaleProtocol.fff1Frames)
        #expect(unit == [.write(QNScaleProtocol.fff2Commands, QNFrame.unitSetting(protocolType: 0xFF, unit: .pounds), withResponse: true,
                                purpose: "the unit setting (0x13)")])
        // No 0x14: a weight frame ends the opening too.
        #expect(qn.received(weight(7235, stable: true, type: 0xFF), from: QNScaleProtocol.fff1Frames)
                == [.ready, .reading(WeightReading(kilograms: 72.35, stable: true, displayUnit: .pounds))])
    }

    @Test func aScaleWithoutTheCommandCharacteristicIsUnsupported() {
        var qn = logic()
        #expect(throws: ScaleError.self) { try qn.subscriptions(available: [QNScaleProtocol.ffe1Frames]) }
    }

    @Test func malformedValuesAreCountedAndSkipped() {
        var qn = logic()
        _ = try? qn.subscriptions(available: [QNScaleProtocol.ffe1Frames, QNScaleProtocol.ffe3Unit])
        #expect(qn.received([0x12, 0x0F, 0x15], from: QNScaleProtocol.ffe1Frames).isEmpty)
        #expect(qn.malformedFrames == 1)
    }

    @Test func theBroadcastFrameIsReadAsQNHandlerBroadcastDescribes() throws {
        // AA BB, address, padding to the status byte (bit 5 stable), weight LE hundredths.
        var data: [UInt8] = [0xAA, 0xBB, 0xC1, 0x22, 0x33, 0x44, 0x55, 0x66] + Array(repeating: 0, count: 11)
        data[15] = 0x20
        data[17] = UInt8(7235 & 0xFF)
        data[18] = UInt8(7235 >> 8)
        let ad = Advertisement(manufacturerData: [0xFFFF: data])
        #expect(QNBroadcastDriver().reading(from: ad) == WeightReading(kilograms: 72.35, stable: true))
        data[15] = 0
        #expect(QNBroadcastDriver().reading(from: Advertisement(manufacturerData: [0xFFFF: data]))?.stable == false)
        #expect(QNBroadcastFrame(manufacturerData: Array(data.prefix(18))) == nil, "too short")
        data[17] = 10
        data[18] = 0
        #expect(QNBroadcastDriver().reading(from: Advertisement(manufacturerData: [0xFFFF: data])) == nil, "0.1 kg is no reading")
    }
}
