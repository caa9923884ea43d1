import BLEProtocol
import HAL
import Testing
import Transports
@testable import Peripherals
@testable import VirtualController

/// The replaying peripheral as the value the controller feeds (sans-IO): what it answers, when,
/// and what it warns about.
@Suite struct ReplayPeripheralTests {
    static let address = BLEAddress(string: "B0:B0:B0:00:00:01")!
    static let link = VirtualLinkParameters(central: BLEAddress(string: "A0:A0:A0:00:00:01")!, interval: 24, latency: 0, supervisionTimeout: 500)

    /// A scale-like session: a read, a CCCD write followed by two indications 300 ms apart, a
    /// control-point write, and the peripheral ending the link 1 s later.
    static var recorded: BLECassette.Peripheral {
        BLECassette.Peripheral(address: address, advertising: [
            .init(at: .milliseconds(100), kind: .connectable, rssi: -50, data: [0x02, 0x01, 0x06]),
            .init(at: .milliseconds(100), kind: .scanResponse, rssi: -50, data: [0x03, 0x09, 0x41, 0x42]),
            .init(at: .seconds(5), kind: .connectable, rssi: -55, data: [0x02, 0x01, 0x04]),
        ], connections: [BLECassette.Connection(at: .seconds(1), att: [
            .init(at: .milliseconds(10), direction: .toPeripheral, pdu: [0x0A, 0x03, 0x00]),
            .init(at: .milliseconds(12), direction: .fromPeripheral, pdu: [0x0B, 0x41]),
            .init(at: .milliseconds(20), direction: .toPeripheral, pdu: [0x12, 0x0F, 0x00, 0x02, 0x00]),
            .init(at: .milliseconds(21), direction: .fromPeripheral, pdu: [0x13]),
            .init(at: .milliseconds(320), direction: .fromPeripheral, pdu: [0x1D, 0x0E, 0x00, 0x01]),
            .init(at: .milliseconds(321), direction: .toPeripheral, pdu: [0x1E]),
            .init(at: .milliseconds(620), direction: .fromPeripheral, pdu: [0x1D, 0x0E, 0x00, 0x02]),
            .init(at: .milliseconds(700), direction: .toPeripheral, pdu: [0x12, 0x10, 0x00, 0xAA, 0xBB]),
            .init(at: .milliseconds(705), direction: .fromPeripheral, pdu: [0x13]),
        ], end: .init(at: .milliseconds(1_705), byHost: false, reason: 0x13))])
    }

    static func att(_ pdu: [UInt8]) -> L2CAPFrame { L2CAPFrame(channel: L2CAPFrame.att, payload: pdu) }

    static func sent(_ actions: [PeripheralAction]) -> [[UInt8]] {
        actions.compactMap { if case .send(let frame) = $0 { frame.payload } else { nil } }
    }

    func peripheral(timing: ReplayTiming = .recorded) -> (ReplayPeripheral, Locked<[String]>) {
        let warnings = Locked<[String]>([])
        return (ReplayPeripheral(Self.recorded, timing: timing, warn: { message in warnings.withLock { $0.append(message) } }), warnings)
    }

    /// Issue 27, item 17: a recording that stops while the central waits (no end recorded)
    /// says so and ends the link after `endGrace`, instead of leaving the central to its deadline;
    /// a request in the meantime puts that off.
    @Test func aRecordingThatRunsOutEndsTheLinkAndSaysSo() {
        var cut = Self.recorded
        cut.connections[0].att = Array(cut.connections[0].att.prefix(2))
        cut.connections[0].end = nil
        let warnings = Locked<[String]>([])
        var replay = ReplayPeripheral(cut, timing: .immediate, warn: { message in warnings.withLock { $0.append(message) } })
        let start = Duration.seconds(10)
        _ = replay.linkUp(Self.link, at: start)
        #expect(Self.sent(replay.received(Self.att([0x0A, 0x03, 0x00]), at: start)) == [[0x0B, 0x41]])
        #expect(replay.nextDeadline == start + ReplayPeripheral.endGrace)
        // The central asks again (a poll): answered as recorded, and the grace starts over.
        let poll = start + .seconds(1)
        #expect(Self.sent(replay.received(Self.att([0x0A, 0x03, 0x00]), at: poll)) == [[0x0B, 0x41]])
        #expect(replay.advance(to: start + ReplayPeripheral.endGrace).isEmpty)
        #expect(replay.advance(to: poll + ReplayPeripheral.endGrace) == [.disconnect(reason: 0x13)])
        #expect(warnings.withLock { $0 }.contains { $0.contains("ends here") })
    }

    @Test func answersComeWithTheirRecordedDelaysAndThePeripheralEndsTheLinkAsRecorded() {
        var (replay, warnings) = peripheral()
        let start = Duration.seconds(10)
        #expect(replay.linkUp(Self.link, at: start).isEmpty)
        #expect(Self.sent(replay.received(Self.att([0x0A, 0x03, 0x00]), at: start)) == [], "the read response is 2 ms away")
        #expect(replay.nextDeadline == start + .milliseconds(2))
        #expect(Self.sent(replay.advance(to: start + .milliseconds(2))) == [[0x0B, 0x41]])
        let write = start + .milliseconds(50)
        _ = replay.received(Self.att([0x12, 0x0F, 0x00, 0x02, 0x00]), at: write)
        #expect(Self.sent(replay.advance(to: write + .milliseconds(1))) == [[0x13]])
        #expect(Self.sent(replay.advance(to: write + .milliseconds(299))) == [])
        #expect(Self.sent(replay.advance(to: write + .milliseconds(300))) == [[0x1D, 0x0E, 0x00, 0x01]])
        // Our confirmation is not a request: it changes nothing.
        #expect(replay.received(Self.att([0x1E]), at: write + .milliseconds(301)).isEmpty)
        #expect(Self.sent(replay.advance(to: write + .milliseconds(600))) == [[0x1D, 0x0E, 0x00, 0x02]])
        let control = write + .seconds(2)
        _ = replay.received(Self.att([0x12, 0x10, 0x00, 0xAA, 0xBB]), at: control)
        #expect(Self.sent(replay.advance(to: control + .milliseconds(5))) == [[0x13]])
        #expect(replay.advance(to: control + .milliseconds(1_004)).isEmpty)
        #expect(replay.advance(to: control + .milliseconds(1_005)) == [.disconnect(reason: 0x13)])
        #expect(warnings.value.isEmpty)
    }

    @Test func anotherValueIsAnsweredAsRecordedWithOneWarningUnlessTheHandleVaries() {
        var (replay, warnings) = peripheral(timing: .immediate)
        _ = replay.linkUp(Self.link, at: .zero)
        #expect(Self.sent(replay.received(Self.att([0x12, 0x10, 0x00, 0xCC]), at: .zero)) == [[0x13]])
        let messages = warnings.value
        #expect(messages == ["replay: the write to handle 0x0010 of B0:B0:B0:00:00:01 was aabb in the recording, now cc; answered as recorded"])

        var recorded = Self.recorded
        recorded.varying = [0x0010]
        let quiet = Locked<[String]>([])
        var varying = ReplayPeripheral(recorded, timing: .immediate, warn: { message in quiet.withLock { $0.append(message) } })
        _ = varying.linkUp(Self.link, at: .zero)
        #expect(Self.sent(varying.received(Self.att([0x12, 0x10, 0x00, 0xCC]), at: .zero)) == [[0x13]])
        #expect(quiet.value.isEmpty)
    }

    @Test func aRequestNeverRecordedGets0x06AndOneWarningHoweverOftenItIsAsked() {
        var (replay, warnings) = peripheral(timing: .immediate)
        _ = replay.linkUp(Self.link, at: .zero)
        for _ in 0..<3 {
            #expect(Self.sent(replay.received(Self.att([0x0A, 0x21, 0x00]), at: .zero)) == [[0x01, 0x0A, 0x21, 0x00, 0x06]])
        }
        #expect(warnings.value.count == 1)
        #expect(warnings.value.first?.contains("never saw Read Request for handle 0x0021") == true)
        // A read asked again after its recorded answer was played gets that answer again.
        #expect(Self.sent(replay.received(Self.att([0x0A, 0x03, 0x00]), at: .zero)) == [[0x0B, 0x41]])
        #expect(Self.sent(replay.received(Self.att([0x0A, 0x03, 0x00]), at: .zero)) == [[0x0B, 0x41]])
        #expect(warnings.value.count == 1)
    }

    @Test func itAdvertisesWhatWasRecordedAndChangesWhenTheRecordingDid() {
        var (replay, _) = peripheral()
        #expect(replay.advertising.form == .legacy(advertisingData: [0x02, 0x01, 0x06], scanResponse: [0x03, 0x09, 0x41, 0x42]))
        #expect(replay.advertising.firstEvent == .milliseconds(100))
        #expect(replay.nextDeadline == .seconds(5))
        _ = replay.advance(to: .seconds(5))
        #expect(replay.advertising.form == .legacy(advertisingData: [0x02, 0x01, 0x04], scanResponse: [0x03, 0x09, 0x41, 0x42]))
        #expect(replay.advertising.rssi == -55)
    }
}
