import Foundation
import HAL
import HALFakes
import PeerSupport
import Testing
@_spi(Fuzzing) @testable import Transports

/// The host stack's event hook (`HostEvent`, what `hwprobe -v` prints) against the bumble peer:
/// each thing the stack does on a real link is reported once, with the facts a person needs.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct HostEventTests {
    static func uuid(_ id: UInt16) -> BluetoothUUID {
        BluetoothUUID(string: String(format: "A5C3%04X-6B1E-4F2A-9D3C-2B7E5F10C4A9", id))!
    }

    @Test func aSessionReportsControllerDiscoveryConnectionMTUSubscriptionAndATTErrors() async throws {
        let peer = try await SharedPeers.shared.peer()
        await peer.waitUntilIdle()
        let events = Locked<[HostEvent]>([])
        let central = try await BLECentral.open(peer.tcp, events: { event in events.withLock { $0.append(event) } })
        guard case .controllerOpened(let uri, let address)? = events.value.first else {
            Issue.record("the first event is not the controller opening: \(events.value)")
            await central.close()
            return
        }
        #expect(uri == peer.tcp)
        #expect(address?.description == "A0:A0:A0:00:00:01", "controller A's public address (Tests/Peers/README.md)")

        var found: DiscoveredDevice?
        for try await device in central.discover() where device.address.bytes == peer.address.bytes {
            found = device
            break
        }
        let device = try #require(found)
        #expect(events.value.contains(.peripheralSeen(device)))

        let connection = try await central.connect(device.address)
        let link = connection.handle
        let mtu = try await connection.bearer.exchangeMTU(247)
        let trees = try await connection.gatt.discoverAll()
        let characteristics = Dictionary(trees.flatMap(\.characteristics).map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
        let notifying = try #require(characteristics[Self.uuid(0x0006)])
        _ = try await connection.gatt.subscribe(notifying)
        let writeOnly = try #require(characteristics[Self.uuid(0x0004)])
        await #expect(throws: BLEError.att(ATTFailure(code: 0x02, handle: writeOnly.valueHandle, requestOpcode: 0x0A))) {
            try await connection.gatt.read(writeOnly.valueHandle)
        }
        await connection.disconnect()
        await central.close()

        let seen = events.value
        let connecting = try #require(seen.firstIndex(of: .connecting(device.address)))
        let connected = try #require(seen.firstIndex(of: .connected(connection.peer, link: link)))
        #expect(connecting < connected)
        #expect(seen.contains(.mtuExchanged(link: link, mtu: mtu)))
        #expect(seen.contains(.subscribed(link: link, characteristic: notifying.uuid, valueHandle: notifying.valueHandle,
                                          indications: false)))
        #expect(seen.contains(.attError(link: link, ATTFailure(code: 0x02, handle: writeOnly.valueHandle, requestOpcode: 0x0A))))
        // Discovery ends each range with Attribute Not Found: those are ATT errors on the wire too.
        #expect(seen.contains { if case .attError(link, let failure) = $0 { failure.code == 0x0A } else { false } })
        #expect(seen.last == .disconnected(link: link, .localHostTerminated))
    }

    @Test func aCentralOpenedWithoutAHookStillWorks() async throws {
        let peer = try await SharedPeers.shared.peer()
        let central = try await BLECentral.open(peer.tcp)
        #expect(central.events == nil)
        await central.close()
    }
}

/// The bearer reports what it negotiates and refuses without a link below it (the fuzz targets'
/// stand-in peer), on the link number it was given.
@Suite struct BearerEventTests {
    @Test func exchangeMTUAndAnErrorResponseAreReportedWithTheLink() async throws {
        let events = Locked<[HostEvent]>([])
        let box = Locked<ATTBearer?>(nil)
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30), link: 0x0040,
                               events: { event in events.withLock { $0.append(event) } }) { pdu throws(BLEError) in
            let answer: [UInt8] = pdu.first == 0x02 ? [0x03, 0x64, 0x00] : [0x01, 0x0A, 0x2A, 0x00, 0x05]
            box.value?.receive(answer)
        }
        box.withLock { $0 = bearer }
        #expect(try await bearer.exchangeMTU(247) == 100)
        await #expect(throws: BLEError.att(ATTFailure(code: 0x05, handle: 0x002A, requestOpcode: 0x0A))) {
            try await bearer.request(.readRequest(handle: 0x002A))
        }
        #expect(events.value == [.mtuExchanged(link: 0x0040, mtu: 100),
                                 .attError(link: 0x0040, ATTFailure(code: 0x05, handle: 0x002A, requestOpcode: 0x0A))])
        box.withLock { $0 = nil }
    }
}
