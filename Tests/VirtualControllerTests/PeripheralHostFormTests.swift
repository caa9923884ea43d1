import BLEProtocol
import HAL
import Testing
import Transports
@testable import Peripherals

/// How `PeripheralHost` puts a peripheral's advertising on a real controller: the form asked
/// for, the name `--name` gives, and the address it advertises from.
@Suite struct PeripheralHostFormTests {
    /// Flags, the mirror's 128-bit service UUID (21 bytes), then in the scan response the
    /// manufacturer data and the name.
    static let primary: [UInt8] = [2, 1, 6, 17, 7] + [UInt8](repeating: 0xAB, count: 16)
    static let response: [UInt8] = [10, 0xFF, 0xFF, 0xFF, 0x4D, 0x52, 1, 0, 0, 0x4F, 0x2A] + [12, 9] + Array("Mirror 4F2A".utf8)

    @Test func extendedPutsTheScanResponseInTheOneAdvertisement() {
        let form = PeripheralHost.form(for: .legacy(advertisingData: Self.primary, scanResponse: Self.response), choice: .extended,
                                       name: nil, extendedAvailable: true)
        #expect(form == .extended(data: Self.primary + Self.response))
    }

    @Test func automaticKeepsTheDevicesOwnFormWhenItFits() {
        let legacy = VirtualAdvertising.Form.legacy(advertisingData: Self.primary, scanResponse: Self.response)
        #expect(PeripheralHost.form(for: legacy, choice: .automatic, name: nil, extendedAvailable: true)
                == .legacy(advertisingData: Self.primary, scanResponse: Self.response))
        let extended = VirtualAdvertising.Form.extended(data: Self.primary + Self.response)
        #expect(PeripheralHost.form(for: extended, choice: .automatic, name: nil, extendedAvailable: true) == .extended(data: Self.primary + Self.response))
    }

    @Test func legacyMovesWhatDoesNotFitToTheScanResponse() {
        let extended = VirtualAdvertising.Form.extended(data: Self.primary + Self.response)
        #expect(PeripheralHost.form(for: extended, choice: .legacy, name: nil, extendedAvailable: true)
                == .legacy(advertisingData: Self.primary, scanResponse: Self.response))
    }

    @Test func aNewNameReplacesTheOldOneWhereItWasAndIsShortenedToFit() {
        let renamed = PeripheralHost.form(for: .legacy(advertisingData: Self.primary, scanResponse: Self.response), choice: .legacy,
                                          name: "Bench", extendedAvailable: false)
        #expect(renamed == .legacy(advertisingData: Self.primary, scanResponse: Array(Self.response.prefix(11)) + [6, 9] + Array("Bench".utf8)))
        // 11 + 2 + 30 bytes would not fit 31: the name is cut and marked shortened (0x08).
        let long = String(repeating: "x", count: 30)
        guard case .legacy(_, let response) = PeripheralHost.form(for: .legacy(advertisingData: Self.primary, scanResponse: Self.response),
                                                                  choice: .legacy, name: long, extendedAvailable: false) else {
            Issue.record("not legacy")
            return
        }
        #expect(response.count == 31)
        #expect(Array(response[11...12]) == [19, 0x08])
    }

    @Test func aStaticRandomAddressIsKeptAnyOtherGivesWayToThePublicOne() {
        let random = BLEAddress(string: "C0:FF:EE:00:4F:2A/random")!
        let resolvable = BLEAddress(string: "4A:FF:EE:00:4F:2A/random")!
        let publicAddress = BLEAddress(string: "D4:12:3A:00:18:1D")!
        #expect(PeripheralHost.randomAddress(for: random, publicAddress: false, controllerHasPublic: true) == random)
        #expect(PeripheralHost.randomAddress(for: random, publicAddress: true, controllerHasPublic: true) == nil)
        #expect(PeripheralHost.randomAddress(for: resolvable, publicAddress: false, controllerHasPublic: true) == nil)
        #expect(PeripheralHost.randomAddress(for: publicAddress, publicAddress: false, controllerHasPublic: true) == nil)
        // A controller without a public address: the device's made static random.
        #expect(PeripheralHost.randomAddress(for: publicAddress, publicAddress: false, controllerHasPublic: false)
                == BLEAddress(string: "D4:12:3A:00:18:1D/random"))
        #expect(PeripheralHost.hostReason(0x08) == 0x13)
        #expect(PeripheralHost.hostReason(0x15) == 0x15)
    }
}
