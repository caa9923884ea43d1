import BLEProtocol
import HAL
import Testing
import Transports
@testable import Peripherals

/// The relay's app side as a value (sans-IO): what it forwards to the device, what it sends the
/// app, and how each side's end, MTU and indications are kept apart.
@Suite struct RelayPeripheralTests {
    static let device = BLEAddress(string: "B0:B0:B0:00:00:01")!
    static let link = VirtualLinkParameters(central: BLEAddress(string: "A0:A0:A0:00:00:01")!, interval: 24, latency: 0, supervisionTimeout: 500)
    static let advertising = VirtualAdvertising(form: .extended(data: [0x02, 0x01, 0x06]))

    static func att(_ pdu: [UInt8]) -> L2CAPFrame { L2CAPFrame(channel: L2CAPFrame.att, payload: pdu) }

    static func sent(_ actions: [PeripheralAction]) -> [[UInt8]] {
        actions.compactMap { if case .send(let frame) = $0 { frame.payload } else { nil } }
    }

    /// An app on, and the device's link up behind it.
    static func connected() -> RelayPeripheral {
        var relay = RelayPeripheral(address: device, advertising: advertising)
        _ = relay.linkUp(link, at: .zero)
        _ = relay.takeForwards()
        _ = relay.device(.connected, at: .zero)
        return relay
    }

    @Test func everyRequestGoesToTheDeviceAsItCameAndItsAnswerBackAsItWent() {
        var relay = Self.connected()
        let write: [UInt8] = [0x12, 0x0F, 0x00, 0x01, 0x00]
        #expect(relay.received(Self.att(write), at: .zero).isEmpty)
        #expect(relay.received(Self.att([0x52, 0x10, 0x00, 0xAA]), at: .zero).isEmpty)
        #expect(relay.takeForwards() == [.request(write), .command([0x52, 0x10, 0x00, 0xAA])])
        #expect(relay.takeForwards().isEmpty)
        // An Error Response from the device reaches the app as it was.
        #expect(Self.sent(relay.device(.answered([0x01, 0x12, 0x0F, 0x00, 0x03]), at: .zero)) == [[0x01, 0x12, 0x0F, 0x00, 0x03]])
        // A notification and a stray response from the app are nobody's business.
        #expect(relay.received(Self.att([0x1B, 0x01, 0x00, 0x01]), at: .zero).isEmpty)
        #expect(relay.takeForwards().isEmpty)
    }

    @Test func theAppsMTUExchangeBecomesTheDeviceLinksAndValuesAreCutToTheAppsMTU() {
        var relay = Self.connected()
        _ = relay.received(Self.att([0x02, 0xF7, 0x00]), at: .zero)
        #expect(relay.takeForwards() == [.exchangeMTU(247)])
        #expect(Self.sent(relay.device(.mtu(100), at: .zero)) == [[0x03, 100, 0x00]])
        #expect(relay.appMTU == 100)
        let long = [UInt8](repeating: 0x5A, count: 150)
        let notified = Self.sent(relay.device(.notified(handle: 0x0E, value: long), at: .zero))
        #expect(notified == [[0x1B, 0x0E, 0x00] + long.prefix(97)])
        // A Read By Type answer longer than the app's MTU keeps only its whole entries.
        let entries = (0..<20).flatMap { [UInt8($0), 0x00] + [UInt8](repeating: 0x11, count: 5) }
        let answer = Self.sent(relay.device(.answered([0x09, 7] + entries), at: .zero))
        #expect(answer.first?.count == 2 + 14 * 7)
        #expect(answer.first.map { ($0.count - 2) % 7 } == 0)
    }

    @Test func indicationsGoToTheAppOneAtATimeAndAnUnconfirmedOneEndsItsLinkAfter30Seconds() {
        var relay = Self.connected()
        #expect(Self.sent(relay.device(.indicated(handle: 0x0E, value: [1]), at: .zero)) == [[0x1D, 0x0E, 0x00, 0x01]])
        #expect(relay.device(.indicated(handle: 0x0E, value: [2]), at: .zero).isEmpty)
        #expect(Self.sent(relay.received(Self.att([0x1E]), at: .seconds(1))) == [[0x1D, 0x0E, 0x00, 0x02]])
        #expect(relay.nextDeadline == .seconds(31))
        #expect(relay.advance(to: .seconds(30)).isEmpty)
        #expect(relay.advance(to: .seconds(31)) == [.disconnect(reason: 0x13)])
        // The confirmation itself is the relay's to take: the device had ours at once.
        #expect(relay.takeForwards().isEmpty)
    }

    @Test func theDevicesLinkFollowsTheAppsAndEitherLeavingEndsTheOther() {
        var relay = RelayPeripheral(address: Self.device, advertising: Self.advertising)
        #expect(relay.isAdvertising)
        // The app connecting makes the device's link; a request meanwhile waits its turn behind it.
        #expect(relay.linkUp(Self.link, at: .zero).isEmpty)
        #expect(!relay.isAdvertising)
        #expect(relay.received(Self.att([0x0A, 0x03, 0x00]), at: .zero).isEmpty)
        #expect(relay.takeForwards() == [.connectDevice, .request([0x0A, 0x03, 0x00])])
        _ = relay.device(.connected, at: .zero)
        // The device dropping its link ends the app's, with the device's reason.
        #expect(relay.device(.disconnected(reason: 0x08), at: .zero) == [.disconnect(reason: 0x08)])
        // Asked before the app's link is gone: nothing can answer (0x0E Unlikely Error).
        #expect(Self.sent(relay.received(Self.att([0x0A, 0x03, 0x00]), at: .zero)) == [[0x01, 0x0A, 0x03, 0x00, 0x0E]])
        relay.linkDown(reason: 0x16, at: .zero)
        #expect(relay.takeForwards().isEmpty)
        #expect(relay.isAdvertising)
        // The app leaving ends the device's link; no advertising until that link is gone.
        _ = relay.linkUp(Self.link, at: .zero)
        _ = relay.device(.connected, at: .zero)
        relay.linkDown(reason: 0x13, at: .zero)
        #expect(relay.takeForwards() == [.connectDevice, .endDeviceLink])
        #expect(!relay.isAdvertising)
        // An app that comes while the device's last link is still ending is let go at once.
        #expect(relay.linkUp(Self.link, at: .zero) == [.disconnect(reason: 0x13)])
        relay.linkDown(reason: 0x16, at: .zero)
        #expect(relay.device(.disconnected(reason: 0x16), at: .zero).isEmpty)
        #expect(relay.isAdvertising)
        // A device that cannot be reached ends the app's link it was asked for.
        _ = relay.linkUp(Self.link, at: .zero)
        #expect(relay.device(.disconnected(reason: 0x3E), at: .zero) == [.disconnect(reason: 0x3E)])
    }
}
