import HAL
import Testing
import Transports
@testable import hwprobe
import MirrorV1

/// How `-v` words the host stack's events.
@Suite struct HostEventLogTests {
    func log() -> (HostEventLog, CapturedConsole) {
        let captured = CapturedConsole()
        return (HostEventLog(console: captured.console, registry: DriverRegistry.linked), captured)
    }

    @Test func anATTErrorNamesTheRequestTheHandleAndTheCode() {
        let (log, _) = log()
        #expect(log.line(for: .attError(link: 0x40, ATTFailure(code: 0x02, handle: 0x0012, requestOpcode: 0x0A)))
                == "link 0x0040: ATT error 0x02 Read Not Permitted for Read Request (opcode 0x0A), handle 0x0012")
        #expect(log.line(for: .attError(link: 0x40, ATTFailure(code: 0x80, handle: 0x001D, requestOpcode: 0x12)))
                == "link 0x0040: ATT error 0x80 Application Error 0x80 for Write Request (opcode 0x12), handle 0x001D")
    }

    @Test func attributeNotFoundEndingADiscoveryIsSaidToBeNormal() {
        let (log, _) = log()
        #expect(log.line(for: .attError(link: 1, ATTFailure(code: 0x0A, handle: 0x0014, requestOpcode: 0x10)))
                == "link 0x0001: ATT error 0x0A Attribute Not Found for Read By Group Type Request (opcode 0x10), handle 0x0014: "
                + "the end of a discovery, as the protocol has it")
        #expect(log.line(for: .attError(link: 1, ATTFailure(code: 0x0A, handle: 0x0014, requestOpcode: 0x0A)))?
            .hasSuffix("handle 0x0014") == true, "on a read it is a real error")
    }

    @Test func subscriptionsNameTheCharacteristicWhereItHasAName() {
        let (log, _) = log()
        #expect(log.line(for: .subscribed(link: 1, characteristic: MirrorGATT.uuid(0x05), valueHandle: 0x0E, indications: false))
                == "link 0x0001: subscribed to notifications of mirror scanState (7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00), handle 0x000E")
        let custom = BluetoothUUID(string: "A5C30006-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
        #expect(log.line(for: .subscribed(link: 1, characteristic: custom, valueHandle: 0x20, indications: true))
                == "link 0x0001: subscribed to indications of A5C30006-6B1E-4F2A-9D3C-2B7E5F10C4A9, handle 0x0020")
    }

    @Test func eachPeripheralIsSaidOnceUntilWhatItIsChanges() {
        let (log, captured) = log()
        let address = BLEAddress(string: "B0:B0:B0:00:00:01")!
        let plain = DiscoveredDevice(address: address, rssi: -50, advertisement: Advertisement(localName: "WS Scale"))
        var claimed = plain
        claimed.advertisement = Advertisement(localName: "WS Scale", serviceUUIDs: [BluetoothUUID(0x181D)])
        for device in [plain, plain, claimed, claimed, plain] { log.record(.peripheralSeen(device)) }
        #expect(captured.stderr == """
            found B0:B0:B0:00:00:01 (public) "WS Scale" -50 dBm: no driver claims it
            found B0:B0:B0:00:00:01 (public) "WS Scale" -50 dBm: standard-scale by service 181D

            """)
    }

    @Test func aControllerWithoutAnAddressSaysSo() {
        let (log, _) = log()
        #expect(log.line(for: .controllerOpened(.tcp(host: "127.0.0.1", port: 9101), address: nil))
                == "controller tcp:127.0.0.1:9101 opened (it reports no public address)")
        #expect(log.line(for: .connected(BLEAddress(string: "C2:B0:B0:00:00:01/random")!, link: 0x0041))
                == "connected to C2:B0:B0:00:00:01 (random), handle 0x0041")
    }
}
