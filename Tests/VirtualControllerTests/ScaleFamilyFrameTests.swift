import BLEProtocol
import HAL
import Testing
import Transports
@testable import Peripherals
import VirtualController

/// A central played by hand against one connected virtual scale, sans-IO: ATT PDUs in, the
/// peripheral's answers and frames out, on a timeline the test moves. Indications are confirmed
/// as a client's bearer does.
struct ScaleLink<Device: ScaleGATTDevice> {
    var scale: GATTScalePeripheral<Device>
    var now = Duration.zero
    /// Notifications and indications by characteristic, in order.
    var received: [(uuid: BluetoothUUID, value: [UInt8], indicated: Bool)] = []
    var disconnected: UInt8?

    init(_ scale: GATTScalePeripheral<Device>) {
        self.scale = scale
        take(self.scale.linkUp(VirtualLinkParameters(central: BLEAddress(string: "5A:11:C0:00:00:01")!, interval: 24,
                                                                latency: 0, supervisionTimeout: 500), at: now))
    }

    func handle(_ uuid: BluetoothUUID) -> UInt16 { scale.valueHandle(of: uuid) ?? 0 }

    /// Sends one PDU; returns the first answer that is not a notification or indication.
    @discardableResult
    mutating func ask(_ pdu: ATTPDU) -> ATTPDU? {
        take(scale.received(L2CAPFrame(channel: L2CAPFrame.att, payload: pdu.encoded), at: now))
    }

    mutating func subscribe(_ uuid: BluetoothUUID, indications: Bool = false) {
        let cccd = scale.database.clientConfigurationHandle(forValue: handle(uuid)) ?? 0
        let answer = ask(.writeRequest(handle: cccd, value: indications ? [0x02, 0x00] : [0x01, 0x00]))
        #expect(answer == .writeResponse, "subscribing to \(uuid)")
    }

    /// A Write Request; the answer (a Write Response, or an Error Response's code).
    mutating func write(_ uuid: BluetoothUUID, _ value: [UInt8]) -> ATTPDU? {
        ask(.writeRequest(handle: handle(uuid), value: value))
    }

    mutating func read(_ uuid: BluetoothUUID) -> ATTPDU? { ask(.readRequest(handle: handle(uuid))) }

    /// Moves time to `end`, running every deadline on the way.
    mutating func advance(to end: Duration) {
        while let due = scale.nextDeadline, due <= end {
            now = max(now, due)
            take(scale.advance(to: now))
        }
        now = max(now, end)
    }

    /// The values sent on `uuid`, in order (and forgets them).
    mutating func values(_ uuid: BluetoothUUID) -> [[UInt8]] {
        defer { received.removeAll { $0.uuid == uuid } }
        return received.filter { $0.uuid == uuid }.map(\.value)
    }

    @discardableResult
    private mutating func take(_ actions: [PeripheralAction]) -> ATTPDU? {
        var answer: ATTPDU?
        var confirmations = 0
        for action in actions {
            switch action {
            case .send(let frame):
                guard frame.channel == L2CAPFrame.att, let pdu = try? ATTPDU(parsing: frame.payload) else { continue }
                switch pdu {
                case .handleValueNotification(let handle, let value):
                    received.append((uuid(of: handle), value, false))
                case .handleValueIndication(let handle, let value):
                    received.append((uuid(of: handle), value, true))
                    confirmations += 1
                default:
                    if answer == nil { answer = pdu }
                }
            case .disconnect(let reason):
                disconnected = reason
            default:
                continue
            }
        }
        for _ in 0..<confirmations {
            take(scale.received(L2CAPFrame(channel: L2CAPFrame.att, payload: ATTPDU.handleValueConfirmation.encoded), at: now))
        }
        return answer
    }

    private func uuid(of handle: UInt16) -> BluetoothUUID { scale.database.attribute(handle)?.type ?? BluetoothUUID(0) }
}

/// The sum and XOR checks the vendor frames carry, written out again for the expectations.
enum Check {
    static func sum(_ bytes: [UInt8]) -> [UInt8] { bytes + [bytes.reduce(0, &+)] }
    static func xorAfterFirst(_ bytes: [UInt8]) -> [UInt8] { bytes + [bytes.dropFirst().reduce(0, ^)] }
}

func refusal(_ pdu: ATTPDU?) -> UInt8? {
    if case .errorResponse(_, _, let code)? = pdu { return code }
    return nil
}

/// Each connected family's device side, frame by frame against the public facts its file cites:
/// what it answers the app's opening, and what it sends while the display settles on 72.35 kg
/// (71.90, 72.35, then 72.35 stable, 300, 400 and 400 ms after the person steps on).
@Suite struct ScaleFamilyFrameTests {
    static let address = BLEAddress(string: "D4:12:3A:00:18:1D")!
    static let person = ScaleBodyComposition.bench

    static func scale<D: ScaleGATTDevice>(_ device: D, weight: Double = 72.35, composition: ScaleBodyComposition? = person,
                                         arrival: ScaleArrival = .automatic) -> GATTScalePeripheral<D> {
        GATTScalePeripheral(device, weightKilograms: weight, composition: composition, address: address, arrival: arrival)
    }

    // MARK: standard

    @Test func theStandardScaleIndicatesEachReadingThenItsBodyCompositionWithTheFinalOne() {
        var link = ScaleLink(Self.scale(StandardScaleDevice(measuresBodyComposition: true)))
        // Feature values: WSS resolution 0.05 kg (code 4 in bits 3–6); BCS muscle %, body water
        // mass, impedance and weight (bits 3, 7, 8, 9) at 0.05 kg (code 4 in bits 11–14).
        #expect(link.read(StandardScaleDevice.weightScaleFeature) == .readResponse([0x20, 0x00, 0x00, 0x00]))
        #expect(link.read(StandardScaleDevice.bodyCompositionFeature) == .readResponse([0x88, 0x23, 0x00, 0x00]))
        #expect(refusal(link.write(StandardScaleDevice.weightMeasurement, [0x00])) == ATTErrorCode.writeNotPermitted)
        link.advance(to: .seconds(5))
        #expect(link.received.isEmpty, "nothing until a central asks for indications")
        link.subscribe(StandardScaleDevice.weightMeasurement, indications: true)
        link.subscribe(StandardScaleDevice.bodyCompositionMeasurement, indications: true)
        link.advance(to: .seconds(7))
        // 71.90, 72.35, 72.35 kg in 0.005 kg: 14380, 14470, 14470.
        #expect(link.values(StandardScaleDevice.weightMeasurement) == [[0x00, 0x2C, 0x38], [0x00, 0x86, 0x38], [0x00, 0x86, 0x38]])
        // Flags 0x0710 (muscle %, water mass, impedance, weight); fat 21.4 % = 214; muscle 38.1 % =
        // 381; water 55.2 % of 72.35 kg = 39.94 → 39.95 kg = 7990; 512 Ω = 5120; weight 14470.
        #expect(link.values(StandardScaleDevice.bodyCompositionMeasurement)
                == [[0x10, 0x07, 0xD6, 0x00, 0x7D, 0x01, 0x36, 0x1F, 0x00, 0x14, 0x86, 0x38]])
        #expect(link.received.allSatisfy(\.indicated) && link.received.isEmpty)
    }

    @Test func aStandardScaleInPoundsSaysSoAndRoundsToATenthOfAPound() {
        var link = ScaleLink(Self.scale(StandardScaleDevice(displayUnit: .pounds), weight: 100, composition: nil))
        link.subscribe(StandardScaleDevice.weightMeasurement, indications: true)
        link.advance(to: .seconds(2))
        // 100 kg is 220.46 lb, shown as 220.5: 22050 in 0.01 lb, with the imperial flag.
        #expect(link.values(StandardScaleDevice.weightMeasurement).last == [0x01, 0x22, 0x56])
        #expect(link.scale.database.attributes.allSatisfy { $0.type != StandardScaleDevice.bodyCompositionService })
    }

    // MARK: QN

    @Test func aQNScaleIntroducesItselfAnswersTheUnitAndTimeAndStreamsItsWeight() {
        var link = ScaleLink(Self.scale(QNScaleDevice()))
        link.subscribe(QNScaleDevice.ffe1Frames)
        // 0x12, 15 bytes, protocol type 0x15, byte 10 = 1 (hundredths).
        #expect(link.values(QNScaleDevice.ffe1Frames) == [Check.sum([0x12, 0x0F, 0x15, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0])])
        link.subscribe(QNScaleDevice.ffe2Indications, indications: true)
        // BluetoothQNScale.java's captured unit setting (kilograms), answered 0x14.
        #expect(link.write(QNScaleDevice.ffe3Unit, [0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x00, 0x42]) == .writeResponse)
        #expect(link.values(QNScaleDevice.ffe1Frames) == [Check.sum([0x14, 0x0B, 0x15, 0, 0, 0, 0, 0, 0, 0])])
        #expect(link.scale.device.unit == .kilograms && link.scale.isOccupied, "the person steps on once the unit is set")
        // Its captured time, which "always prompts" the captured FFE2 indication 21 05 15 01 3C.
        link.now = .milliseconds(50)
        #expect(link.write(QNScaleDevice.ffe4Time, [0x20, 0x08, 0x15, 0x68, 0xDF, 0x40, 0x23, 0xE7]) == .writeResponse)
        #expect(link.values(QNScaleDevice.ffe2Indications) == [[0x21, 0x05, 0x15, 0x01, 0x3C]])
        #expect(link.scale.device.clock.unixSeconds(at: .milliseconds(50)) == 0x2340_DF68 + 946_684_800)
        link.advance(to: .seconds(2))
        // 7190 and 7235 hundredths, big-endian; stable at byte 5; 512 Ω as resistance 512 / 0.3 + 400 = 2107.
        #expect(link.values(QNScaleDevice.ffe1Frames) == [
            Check.sum([0x10, 0x0B, 0x15, 0x1C, 0x16, 0x00, 0, 0, 0, 0]),
            Check.sum([0x10, 0x0B, 0x15, 0x1C, 0x43, 0x00, 0, 0, 0, 0]),
            Check.sum([0x10, 0x0B, 0x15, 0x1C, 0x43, 0x01, 0x08, 0x3B, 0x08, 0x3B]),
        ])
    }

    @Test func aQNScaleRefusesBrokenFramesAndHangsUpWhenToldTo() {
        var link = ScaleLink(Self.scale(QNScaleDevice()))
        #expect(refusal(link.write(QNScaleDevice.ffe3Unit, [0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x00, 0x43])) == 0x13, "checksum")
        #expect(refusal(link.write(QNScaleDevice.ffe3Unit, [0x13, 0x09, 0x15, 0x01, 0x10, 0x00, 0x00, 0x41])) == 0x13, "length byte")
        #expect(refusal(link.write(QNScaleDevice.ffe3Unit, Check.sum([0x13, 0x05, 0x15, 0x01]))) == 0x0D, "too short for a unit")
        #expect(refusal(link.write(QNScaleDevice.ffe1Frames, [0x00])) == ATTErrorCode.writeNotPermitted)
        #expect(link.scale.device.unit == nil)
        // QNHandler.kt's bare time (02 + seconds since 2000) is taken as a time.
        #expect(link.write(QNScaleDevice.ffe4Time, [0x02, 0x10, 0x00, 0x00, 0x00]) == .writeResponse)
        #expect(link.scale.device.timeSet)
        #expect(link.write(QNScaleDevice.ffe3Unit, [0x1F, 0x05, 0x15, 0x10, 0x49]) == .writeResponse)
        #expect(link.disconnected == 0x13, "1F 05 15 10 49 terminates the connection")
    }

    @Test func theFFF0LayoutSpeaksTheSameFramesOnFFF1AndFFF2() {
        var link = ScaleLink(Self.scale(QNScaleDevice(layout: .fff0), composition: nil))
        #expect(link.scale.advertising.form == .legacy(advertisingData: [0x02, 0x01, 0x06, 0x03, 0x03, 0xF0, 0xFF, 0x09, 0x09]
                                                        + Array("QN-Scale".utf8), scanResponse: []))
        link.subscribe(QNScaleDevice.fff1Frames)
        #expect(link.values(QNScaleDevice.fff1Frames).first?.first == 0x12)
        #expect(link.write(QNScaleDevice.fff2Commands, Check.sum([0x13, 0x09, 0x15, 0x02, 0x10, 0, 0, 0])) == .writeResponse)
        #expect(link.scale.device.unit == .pounds)
        #expect(link.write(QNScaleDevice.fff2Commands, Check.sum([0x20, 0x08, 0x15, 0x01, 0x00, 0x00, 0x00])) == .writeResponse)
        link.advance(to: .seconds(2))
        #expect(link.values(QNScaleDevice.fff1Frames).last == Check.sum([0x10, 0x0B, 0x15, 0x1C, 0x43, 0x01, 0, 0, 0, 0]))
    }

    // MARK: Yunmai

    @Test func aYunmaiScaleTakesTheCapturedUserAndAnswersWithItsIdInTheResult() {
        var link = ScaleLink(Self.scale(YunmaiScaleDevice()))
        link.subscribe(YunmaiScaleDevice.measurements)
        // openScale's log of a real Mini 2 session: user 0x16BF, 180 cm, male, 20, kg, activity 0.
        #expect(link.write(YunmaiScaleDevice.commands, [0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, 0x16, 0xBF, 0xB4, 0x01, 0x14, 0x55, 0x5A,
                                                        0x00, 0x00, 0x01, 0x00, 0x05]) == .writeResponse)
        #expect(link.scale.device.user?.id == 0x16BF && link.scale.device.user?.heightCm == 180)
        // The time, 2026-03-14 09:26:40 UTC (1_773_480_400 = 0x69B5_29D0).
        #expect(link.write(YunmaiScaleDevice.commands, Check.xorAfterFirst([0x0D, 0x0D, 0x11, 0x69, 0xB5, 0x29, 0xD0, 0, 0, 0, 0, 0])) == .writeResponse)
        #expect(!link.scale.isOccupied, "not before the start command")
        #expect(link.write(YunmaiScaleDevice.commands, [0x0D, 0x05, 0x13, 0x00, 0x16]) == .writeResponse)
        #expect(link.values(YunmaiScaleDevice.measurements) == [[0x0D, 0x1E, 0x05, 0x05, 0x1E]], "the gists' example answer")
        link.advance(to: .seconds(2))
        // Live frames (type 01): date, weight; then the result (type 02): date, user, weight,
        // resistance (512), body fat 21.40 % (2140 = 0x085C). By the result the clock ran 1.1 s.
        #expect(link.values(YunmaiScaleDevice.measurements) == [
            Check.xorAfterFirst([0x0D, 0x1E, 0x0B, 0x01, 0x69, 0xB5, 0x29, 0xD0, 0x1C, 0x16]),
            Check.xorAfterFirst([0x0D, 0x1E, 0x0B, 0x01, 0x69, 0xB5, 0x29, 0xD0, 0x1C, 0x43]),
            Check.xorAfterFirst([0x0D, 0x1E, 0x14, 0x02, 0x00, 0x69, 0xB5, 0x29, 0xD1, 0x00, 0x00, 0x16, 0xBF, 0x1C, 0x43, 0x02, 0x00,
                                 0x08, 0x5C]),
        ])
    }

    @Test func aYunmaiScaleRefusesFramesThatDoNotAddUp() {
        var link = ScaleLink(Self.scale(YunmaiScaleDevice()))
        #expect(refusal(link.write(YunmaiScaleDevice.commands, [0x0D, 0x05, 0x13, 0x00, 0x17])) == 0x13, "XOR")
        #expect(refusal(link.write(YunmaiScaleDevice.commands, [0x0C, 0x05, 0x13, 0x00, 0x16])) == 0x13, "start byte")
        #expect(refusal(link.write(YunmaiScaleDevice.commands, Check.xorAfterFirst([0x0D, 0x06, 0x10, 0x01, 0x00]))) == 0x0D, "a user is 18 bytes")
    }

    // MARK: 1byone

    @Test func aOneByoneScaleAcknowledgesTheClockHasNoHistoryAndSendsImpedanceWithItsFinalFrame() {
        var link = ScaleLink(Self.scale(OneByoneScaleDevice()))
        link.subscribe(OneByoneScaleDevice.frames)
        #expect(link.read(OneByoneScaleDevice.batteryLevel) == .readResponse([85]))
        // FD 37, kilograms, group 1: XOR FD ^ 37 ^ 00 ^ 01 = CB.
        #expect(link.write(OneByoneScaleDevice.commands, [0xFD, 0x37, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xCB]) == .writeResponse)
        #expect(link.write(OneByoneScaleDevice.commands, [0xF1, 0x07, 0xEA, 0x03, 0x0E, 0x09, 0x1A, 0x28]) == .writeResponse)
        #expect(link.values(OneByoneScaleDevice.frames) == [[0xF1, 0x00]])
        #expect(link.scale.device.clock.civil(at: link.now) == .init(year: 2026, month: 3, day: 14, hour: 9, minute: 26, second: 40))
        #expect(!link.scale.isOccupied)
        #expect(link.write(OneByoneScaleDevice.commands, [0xF2, 0x00]) == .writeResponse)
        #expect(link.values(OneByoneScaleDevice.frames) == [[0xF2, 0x00]], "no stored measurements: their end at once")
        link.advance(to: .seconds(2))
        // Weight little-endian in 0.01 kg; impedance (512 Ω = 5120 tenths) only in the last, byte 9
        // 1 in the others.
        #expect(link.values(OneByoneScaleDevice.frames) == [
            [0xCF, 0x00, 0x00, 0x16, 0x1C, 0, 0, 0, 0, 0x01, 0],
            [0xCF, 0x00, 0x00, 0x43, 0x1C, 0, 0, 0, 0, 0x01, 0],
            [0xCF, 0x00, 0x14, 0x43, 0x1C, 0, 0, 0, 0, 0x00, 0],
        ])
        #expect(link.write(OneByoneScaleDevice.commands, [0xF2, 0x01]) == .writeResponse)
        #expect(link.values(OneByoneScaleDevice.frames) == [[0xF2, 0x01]])
        #expect(refusal(link.write(OneByoneScaleDevice.commands, [0xFD, 0x37, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xCC])) == 0x13, "XOR")
    }

    // MARK: Beurer / Sanitas

    @Test func aBeurerScaleAnswersInitStatusUnitAndUsersAndSendsWeightOnlyFrames() {
        var link = ScaleLink(Self.scale(BeurerSanitasScaleDevice(model: .beurerBF700)))
        link.subscribe(BeurerSanitasScaleDevice.characteristic)
        let frames = BeurerSanitasScaleDevice.characteristic
        #expect(link.write(frames, [0xF6, 0x01]) == .writeResponse)
        #expect(link.values(frames) == [[0xF6, 0x01]])
        #expect(link.write(frames, [0xF9, 0x69, 0xB5, 0x29, 0xD0]) == .writeResponse)
        #expect(link.values(frames).isEmpty, "the time is not answered")
        #expect(link.write(frames, [0xF7, 0x4F] + [UInt8](repeating: 0, count: 8)) == .writeResponse)
        // Status: battery 80 %, thresholds 1.0, unit 1 (kg), no user, no reference weight, no measurement, version 1.
        #expect(link.values(frames) == [[0xF7, 0xF0, 0x4F, 0x00, 80, 10, 10, 0x01, 0x01, 0x01, 0x01, 0x01]])
        #expect(link.scale.isOccupied, "listening once the status is answered")
        #expect(link.write(frames, [0xF7, 0x4D, 0x02]) == .writeResponse)
        #expect(link.write(frames, [0xF7, 0x4D, 0x03]) == .writeResponse)
        #expect(link.write(frames, [0xF7, 0x33]) == .writeResponse)
        #expect(link.write(frames, [0xF7, 0x31] + [UInt8](repeating: 0, count: 16)) == .writeResponse)
        #expect(link.values(frames) == [[0xF7, 0xF0, 0x4D, 0x00], [0xF7, 0xF0, 0x4D, 0x01], [0xF7, 0xF0, 0x33, 0x00, 0x00, 0x08],
                                        [0xF7, 0xF0, 0x31, 0x01]])
        #expect(link.scale.device.unitCode == 2)
        link.advance(to: .seconds(2))
        // 50 g units, big-endian: 1438, 1447, 1447; byte 2 is 0 once stable.
        #expect(link.values(frames) == [[0xF7, 0x58, 0x01, 0x05, 0x9E], [0xF7, 0x58, 0x01, 0x05, 0xA7], [0xF7, 0x58, 0x00, 0x05, 0xA7]])
        #expect(refusal(link.write(frames, [0xE7, 0x4F])) == 0x13, "the other models' start byte")
        #expect(link.write(frames, [0xFA]) == .writeResponse)
        #expect(link.disconnected == 0x13, "alt(10): disconnect")
    }

    @Test func aSanitasScaleSpeaksWithStartByteE7() {
        var link = ScaleLink(Self.scale(BeurerSanitasScaleDevice(model: .sanitasSBF70)))
        #expect(link.scale.name == "SANITAS SBF70")
        link.subscribe(BeurerSanitasScaleDevice.characteristic)
        #expect(link.write(BeurerSanitasScaleDevice.characteristic, [0xE6, 0x01]) == .writeResponse)
        #expect(link.write(BeurerSanitasScaleDevice.characteristic, [0xE7, 0x4F] + [UInt8](repeating: 0, count: 8)) == .writeResponse)
        #expect(link.values(BeurerSanitasScaleDevice.characteristic).map(\.first) == [0xE6, 0xE7])
    }

    // MARK: ICOMON

    @Test func anIcomonScaleTakesItsConfigurationAndSendsBothResultFramesOnceSettled() {
        var link = ScaleLink(Self.scale(IcomonScaleDevice(), weight: 72.4))
        link.subscribe(IcomonScaleDevice.results)
        func packet(_ c: [UInt8]) -> [UInt8] { [0xAC, 0x02] + c + [0xCC, (c + [0xCC]).reduce(0, &+)] }
        for c: [UInt8] in [[0xF7, 0, 0, 0], [0xFA, 0, 0, 0], [0xFB, 1, 30, 170], [0xFD, 26, 3, 14], [0xFC, 9, 26, 40], [0xFE, 6, 1, 0]] {
            #expect(link.write(IcomonScaleDevice.configuration, packet(c)) == .writeResponse)
        }
        #expect(link.scale.device.configured == [0xF7, 0xFA, 0xFB, 0xFD, 0xFC, 0xFE] && link.scale.device.unitCode == 1)
        link.advance(to: .seconds(2))
        // Only the settled result: 72.4 kg = 724, BMI 72.4 / 1.7² = 25.05 → 251, fat 214 (tenths,
        // big-endian) stamped 2026-03-14 09:26:41 (1.1 s after the clock was set); then muscle 381,
        // no basal metabolism, bone 31, water 552, age 30, no protein, the constant tail.
        #expect(link.values(IcomonScaleDevice.results) == [
            [0xAC, 0x02, 0xFF, 0x00, 0x02, 0x21, 26, 3, 14, 9, 26, 41, 0x02, 0xD4, 0x00, 0xFB, 0x00, 0xD6, 0x00, 0x00],
            [0x01, 0x00, 0x01, 0x7D, 0x00, 0x00, 0x00, 0x1F, 0x02, 0x28, 30, 0x00, 0x00, 0x00, 0x01, 0x1B, 0xA5, 0x02, 0x47, 0x00],
        ])
        #expect(refusal(link.write(IcomonScaleDevice.configuration, [0xAC, 0x02, 0xF7, 0, 0, 0, 0xCC, 0xC4])) == 0x13, "sum")
        #expect(refusal(link.write(IcomonScaleDevice.configuration, [0xF7, 0, 0, 0])) == 0x0D, "bare, as one other app writes it")
    }

    // MARK: the controls

    @Test func underManualArrivalTheKeysMoveThePersonAndALateCentralIsToldTheDisplay() {
        var link = ScaleLink(Self.scale(QNScaleDevice(), arrival: .manual))
        link.subscribe(QNScaleDevice.ffe1Frames)
        #expect(link.write(QNScaleDevice.ffe3Unit, Check.sum([0x13, 0x09, 0x15, 0x01, 0x10, 0, 0, 0])) == .writeResponse)
        _ = link.values(QNScaleDevice.ffe1Frames)
        link.advance(to: .seconds(5))
        #expect(!link.scale.isOccupied && link.received.isEmpty, "nobody steps on by themselves")
        link.scale.stepOn()
        #expect((link.scale.nextDeadline ?? .seconds(99)) <= link.now, "the key takes effect at the next advance, at once")
        link.advance(to: .seconds(7))
        #expect(link.values(QNScaleDevice.ffe1Frames).map { $0[5] } == [0, 0, 1])
        link.scale.setWeight(75)
        link.advance(to: .seconds(9))
        #expect(link.values(QNScaleDevice.ffe1Frames).last == Check.sum([0x10, 0x0B, 0x15, 0x1D, 0x4C, 0x01, 0x08, 0x3B, 0x08, 0x3B]))
        link.scale.stepOff()
        link.advance(to: .seconds(10))
        #expect(link.values(QNScaleDevice.ffe1Frames) == [Check.sum([0x10, 0x0B, 0x15, 0, 0, 0, 0, 0, 0, 0])], "the display back to 0")
        // A new central, with someone already standing there: it hears the display at once.
        link.scale.stepOn()
        link.advance(to: .seconds(12))
        link.scale.linkDown(reason: 0x13, at: link.now)
        #expect(link.scale.isOccupied, "manual: the person stays when the central leaves")
        var next = ScaleLink(link.scale)
        next.subscribe(QNScaleDevice.ffe1Frames)
        #expect(next.write(QNScaleDevice.ffe3Unit, Check.sum([0x13, 0x09, 0x15, 0x01, 0x10, 0, 0, 0])) == .writeResponse)
        #expect(next.values(QNScaleDevice.ffe1Frames).last == Check.sum([0x10, 0x0B, 0x15, 0x1D, 0x4C, 0x01, 0x08, 0x3B, 0x08, 0x3B]))
    }

    @Test func aScaleThatSwitchesItselfOffEndsTheLinkAfterSettling() {
        var link = ScaleLink(GATTScalePeripheral(StandardScaleDevice(), weightKilograms: 60, address: Self.address,
                                                 powerOffAfterSettling: .milliseconds(500)))
        link.subscribe(StandardScaleDevice.weightMeasurement, indications: true)
        link.advance(to: .milliseconds(1500))
        #expect(link.disconnected == nil)
        link.advance(to: .milliseconds(1600))
        #expect(link.disconnected == 0x13)
    }
}
