import Testing
@testable import hwprobe

/// What `watch` says as things come and go (the pure part: snapshots and advertisements in,
/// events out).
@Suite struct WatchStateTests {
    static func peripheral(_ address: String, weight: Double? = nil, rssi: Int = -60) -> ListReport.Peripheral {
        ListReport.Peripheral(hci: "sim:", address: address, name: nil, rssi: rssi, services: [], driver: nil, kind: nil,
                              weightKg: weight, addressType: "public", reason: nil)
    }

    @Test func snapshotsGiveAddedRemovedAndChanged() {
        var state = WatchState()
        var report = ListReport()
        report.serialPorts = [.init(path: "/dev/ttyUSB0")]
        report.cameras = [.init(uri: "v4l2:/dev/video0", card: "Cam", driver: "uvcvideo", formats: [])]
        let first = state.snapshot(report)
        #expect(first.map(\.kind) == [.added, .added])
        #expect(first.map(\.section) == ["cameras", "serialPorts"])
        #expect(first[1].device == #"{"path":"/dev/ttyUSB0"}"#)
        #expect(state.snapshot(report).isEmpty, "nothing new, nothing said")
        report.serialPorts = []
        report.cameras[0].card = "Cam (renamed)"
        let second = state.snapshot(report)
        #expect(second.map(\.kind) == [.changed, .removed])
        #expect(second[1].device == #"{"path":"/dev/ttyUSB0"}"#, "a removal carries the device as it was")
    }

    @Test func aResolvedDeviceIsOneDeviceUnderItsIdentityWhateverItsPrivateAddress() throws {
        var state = WatchState()
        var first = Self.peripheral("B0:B0:B0:00:00:2D")
        first.resolvedFrom = "4A:11:22:33:44:55"
        var renewed = first
        renewed.resolvedFrom = "57:66:77:88:99:AA"
        #expect(state.heard(first, at: .zero) == nil)
        let heard = state.heard(renewed, at: .milliseconds(100))
        let added = try #require(heard)
        #expect(added.kind == .added)
        #expect(added.device.contains(#""address":"B0:B0:B0:00:00:2D""#) && added.device.contains(#""resolvedFrom":"57:66:77:88:99:AA""#),
                "\(added.device)")
        #expect(added.summary.contains("B0:B0:B0:00:00:2D (resolved from 57:66:77:88:99:AA)"), "\(added.summary)")
        #expect(state.heard(first, at: .seconds(1)) == nil, "a new private address is not a new device")
    }

    @Test func peripheralsComeChangeOnlyWithTheirReadingAndGoAfterTenSeconds() {
        var state = WatchState()
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01"), at: .zero) == nil, "announced once its picture is whole")
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", rssi: -40), at: .milliseconds(100))?.kind == .added)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", rssi: -40), at: .seconds(1)) == nil, "a new RSSI is not a change")
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", weight: 72.35), at: .seconds(2))?.kind == .changed)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", weight: 72.35), at: .seconds(3)) == nil)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:02"), at: .seconds(5)) == nil)
        #expect(state.nextSweep == .seconds(6), "the second is announced a settle time after it was heard")
        #expect(state.sweep(at: .seconds(6)).map(\.kind) == [.added], "heard once, announced after the settle time")
        #expect(state.sweep(at: .seconds(12)).isEmpty)
        #expect(state.nextSweep == .seconds(13))
        let gone = state.sweep(at: .seconds(13))
        #expect(gone.map(\.kind) == [.removed])
        #expect(gone.first?.device.contains("AA:00:00:00:00:01") == true)
        #expect(state.sweep(at: .seconds(15)).map(\.device).first?.contains("AA:00:00:00:00:02") == true)
    }

    /// Issue 27: `watch` printed the first advertisement's object (no name, another claim reason)
    /// where `list` prints the advertisement and scan response together.
    @Test func theAnnouncedObjectIsListsWithTheScanResponsesName() {
        var state = WatchState()
        var advertisement = Self.peripheral("C0:FF:EE:00:4F:2A")
        advertisement.services = ["7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"]
        (advertisement.driver, advertisement.kind, advertisement.reason) = ("mirror-v1", "mirror", "mirror-v1 by service 7B9E0001")
        var response = Self.peripheral("C0:FF:EE:00:4F:2A")
        response.name = "Mirror 4F2A"
        #expect(state.heard(advertisement, at: .zero) == nil)
        let added = state.heard(response, at: .milliseconds(5))
        #expect(added?.kind == .added)
        let device = added?.device ?? ""
        #expect(device.contains(#""name":"Mirror 4F2A""#) && device.contains(#""driver":"mirror-v1""#) && device.contains("7B9E0001"), "\(device)")
        #expect(added?.summary == "Mirror 4F2A  C0:FF:EE:00:4F:2A (public)  mirror, driver mirror-v1  on sim:")
    }

    @Test func aFloodOfAddressesIsFollowedUpToTheLimit() {
        var state = WatchState()
        for index in 0..<(WatchState.peripheralLimit + 500) {
            let address = String(format: "AA:BB:CC:%02X:%02X:%02X", (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF)
            _ = state.heard(Self.peripheral(address), at: .milliseconds(Int64(index)))
        }
        #expect(state.overLimit)
        let announced = state.sweep(at: .seconds(3))
        #expect(announced.count == WatchState.peripheralLimit)
        #expect(state.sweep(at: .seconds(30)).count == WatchState.peripheralLimit, "each goes once unheard")
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:09"), at: .seconds(31)) == nil, "room again after they went")
        #expect(state.sweep(at: .seconds(32)).map(\.kind) == [.added])
    }

    @Test func aJSONLineHasTheContractsKeys() {
        let line = WatchState.line(WatchState.Event(kind: .added, section: "serialPorts", device: #"{"path":"/dev/ttyACM0"}"#),
                                   at: .milliseconds(1500))
        #expect(line == #"{"device":{"path":"/dev/ttyACM0"},"event":"added","section":"serialPorts","t":1.500}"# + "\n")
    }
}
