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

    @Test func peripheralsComeChangeOnlyWithTheirReadingAndGoAfterTenSeconds() {
        var state = WatchState()
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01"), at: .zero)?.kind == .added)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", rssi: -40), at: .seconds(1)) == nil, "a new RSSI is not a change")
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", weight: 72.35), at: .seconds(2))?.kind == .changed)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:01", weight: 72.35), at: .seconds(3)) == nil)
        #expect(state.heard(Self.peripheral("AA:00:00:00:00:02"), at: .seconds(5))?.kind == .added)
        #expect(state.sweep(at: .seconds(12)).isEmpty)
        #expect(state.nextSweep == .seconds(13))
        let gone = state.sweep(at: .seconds(13))
        #expect(gone.map(\.kind) == [.removed])
        #expect(gone.first?.device.contains("AA:00:00:00:00:01") == true)
        #expect(state.sweep(at: .seconds(15)).map(\.device).first?.contains("AA:00:00:00:00:02") == true)
    }

    @Test func aJSONLineHasTheContractsKeys() {
        let line = WatchState.line(WatchState.Event(kind: .added, section: "serialPorts", device: #"{"path":"/dev/ttyACM0"}"#),
                                   at: .milliseconds(1500))
        #expect(line == #"{"device":{"path":"/dev/ttyACM0"},"event":"added","section":"serialPorts","t":1.500}"# + "\n")
    }
}
