import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `hwprobe relay` (the real binary) between bumble's central and bumble's mirror peer, all on
/// one bumble link (Tests/Peers/central_peer.py --mirror): the relay's app side on controller
/// A0, its device side on A1, hwprobe as an app on A2, bumble's central on C, the mirror peer
/// (peerkit's mirror profile, ten times faster than life) on B, the `secure` profile's peripheral
/// (values that need an encrypted link) on another. One bumble process for the suite.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct RelayPeerTests {
    static let peer = Task { try await CentralPeer.start(hosts: 3, arguments: ["--mirror", "--speed", "10", "--secure"]) }
    /// The mirror peer's address (central_peer.py --mirror).
    static let mirror = "B0:B0:B0:00:00:01"
    static let scanStates = ["warmingUp", "ready", "scanning", "stepOff", "processing", "complete"]

    static func relay(_ peer: CentralPeer, to device: String = mirror, record: String? = nil, state: String? = nil) throws -> Serving {
        try Serving(["--hci", peer.hosts[0].description, "--to", peer.hosts[1].description, device, "--advertising", "extended"]
                    + (record.map { ["--record", $0] } ?? []), command: "relay", environment: state.map { ["XDG_STATE_HOME": $0] } ?? [:])
    }

    /// The address the relay (or a served replay) advertises from, once it does.
    static func advertised(_ serving: Serving) async throws -> String {
        let line = try #require(await serving.line(containing: "\"advertising\"", within: .seconds(15)), "\(serving.stop().err)")
        return try #require(try JSONShape.parse(line)["address"]?.string)
    }

    static func events(_ serving: Serving) -> [[String: JSONShape]] {
        serving.all.compactMap { try? JSONShape.parse($0) }
    }

    static func bodyScan(_ central: CentralPeer, at address: String) async throws -> [String: Any] {
        try await central.command(["cmd": "connect", "address": address, "timeout": 5])
        try await central.command(["cmd": "mtu", "mtu": 247])
        let scan = try await central.command(["cmd": "mirror_scan", "timeout": 20])
        try await central.command(["cmd": "disconnect"])
        return scan
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "relay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Issue 31's first "done when", and issue 28's last: bumble's mirror client scans the bumble
    /// mirror through the relay, and the relay's recording, served as `serve replay:`, gives the
    /// same client the same conversation (states and result).
    @Test func bumblesMirrorClientScansThroughTheRelayAndServeReplaysTheRecording() async throws {
        let peer = try await Self.peer.value
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cassette = directory.appending(path: "mirror.cassette").path

        let relay = try Self.relay(peer, record: cassette)
        let address = try await Self.advertised(relay)
        let live = try await Self.bodyScan(peer, at: address)
        #expect(live["states"] as? [String] == Self.scanStates, "\(live)")
        let result = try #require(live["result"] as? String)
        #expect(result.count == 24)
        // The app left: the device's link follows, and the relay advertises again for the next app.
        #expect(await relay.line(containing: "\"event\":\"disconnected\",\"reason\":\"0x16\",\"side\":\"device\"") != nil)
        #expect(await Self.readvertised(relay))
        let (code, err) = relay.stop()
        #expect(code == 0, "\(err)")

        let events = Self.events(relay)
        let app = events.filter { $0["side"]?.string == "app" }
        let device = events.filter { $0["side"]?.string == "device" }
        // Each link with its MTU: the app's exchange made the device link's, the same size.
        #expect(app.contains { $0["event"]?.string == "mtu" && $0["mtu"]?.number == 247 }, "\(app)")
        #expect(device.contains { $0["event"]?.string == "mtu" && $0["mtu"]?.number == 247 }, "\(device)")
        let subscribed = app.filter { $0["event"]?.string == "subscribed" }.compactMap { $0["uuid"]?.string }
        #expect(subscribed == (5...7).map { "7B9E000\($0)-3C2A-4F1B-9E6D-5A4C3B2A1F00" })
        #expect(app.contains { $0["event"]?.string == "read" && $0["value"]?.string == result })
        #expect(app.contains { $0["event"]?.string == "notified" })
        // Within a second of the app's end, the device's.
        let appEnd = try #require(app.first { $0["event"]?.string == "disconnected" }?["t"]?.number)
        let deviceEnded = try #require(device.first { $0["event"]?.string == "disconnected" }?["t"]?.number)
        #expect(deviceEnded >= appEnd && deviceEnded - appEnd < 1.0, "app \(appEnd) device \(deviceEnded)")

        let recorded = try CassetteReader.read(path: cassette)
        let mirror = try #require(recorded.peripherals.first)
        #expect(recorded.peripherals.count == 1)
        #expect(mirror.address.bytes == BLEAddress(string: Self.mirror)?.bytes)
        #expect(mirror.advertising.first?.kind == .extended)
        #expect(mirror.connections.count == 1)
        #expect((mirror.connections.first?.att.count ?? 0) > 50)

        let replaying = try Serving(["--hci", peer.hosts[0].description, "replay:\(cassette)?advertising=extended"])
        let replayed = try await Self.bodyScan(peer, at: try await Self.advertised(replaying))
        #expect(replayed["states"] as? [String] == Self.scanStates, "\(replayed)")
        #expect(replayed["result"] as? String == result)
        #expect(replaying.stop().code == 0)
    }

    /// The other half of the first "done when": hwprobe's own scan as the app through the relay,
    /// and the recording played back with `--hci replay:` (no radio) gives the same scan.
    @Test func hwprobesScanThroughTheRelayReplaysWithHciReplay() async throws {
        let peer = try await Self.peer.value
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cassette = directory.appending(path: "scan.cassette").path
        let relay = try Self.relay(peer, record: cassette)
        let address = try await Self.advertised(relay)
        let live = await TimedRun.run(["scan", "--hci", peer.hosts[2].description, "--mirror", address, "--yes", "--json"])
        #expect(live.code == 0, "\(live.out)\(live.err)")
        let liveJSON = try JSONShape.parse(live.out)
        #expect(liveJSON["outcome"]?.string == "complete", "\(live.out)")
        #expect(await relay.line(containing: "\"reason\":\"0x16\",\"side\":\"device\"", within: .seconds(5)) != nil)
        #expect(relay.stop().code == 0)

        let replayed = await TimedRun.run(["scan", "--hci", "replay:\(cassette)", "--mirror", Self.mirror, "--yes", "--json"])
        #expect(replayed.code == 0, "\(replayed.out)\(replayed.err)")
        let replayedJSON = try JSONShape.parse(replayed.out)
        #expect(replayedJSON["outcome"]?.string == "complete")
        #expect(replayedJSON["states"] == liveJSON["states"], "\(replayed.out)")
        #expect(replayedJSON["result"] == liveJSON["result"], "\(replayed.out)")
    }

    /// Issue 31's second "done when": the device dropping the link ends the app's within a
    /// second, and the relay then waits for the next app with the device connected again.
    @Test func aDeviceThatDropsTheLinkEndsTheAppsWithinASecond() async throws {
        let peer = try await Self.peer.value
        let relay = try Self.relay(peer)
        let address = try await Self.advertised(relay)
        try await peer.command(["cmd": "connect", "address": address, "timeout": 5])
        try await peer.command(["cmd": "discover"])
        try await peer.command(["cmd": "mirror_drop", "reason": 0x13])
        let link = try await peer.command(["cmd": "link", "timeout": 1.0])
        #expect(link["connected"] as? Bool == false, "\(link)")
        try await peer.command(["cmd": "disconnect"])
        #expect(await Self.readvertised(relay), "the relay connects to the device again and waits for the next app")
        let (code, err) = relay.stop()
        #expect(code == 0, "\(err)")
        let events = Self.events(relay)
        let deviceEnd = try #require(events.first { $0["side"]?.string == "device" && $0["event"]?.string == "disconnected" })
        #expect(deviceEnd["reason"]?.string == "0x13")
        let appEnd = try #require(events.first { $0["side"]?.string == "app" && $0["event"]?.string == "disconnected" })
        let gap = (appEnd["t"]?.number ?? 99) - (deviceEnd["t"]?.number ?? 0)
        #expect(gap >= 0 && gap < 1.0, "\(gap)")
    }

    /// A device that needs an encrypted link: its 0x05 makes the relay's device side pair (Just
    /// Works, bonded in the `--to` controller's store) and ask again, so the app gets the value.
    /// The app's own side stays unpaired (`--pairing off`): each side's security is its own.
    @Test func aDeviceThatNeedsPairingIsPairedByTheRelaysDeviceSide() async throws {
        let peer = try await Self.peer.value
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let relay = try Self.relay(peer, to: "B0:B0:B0:00:00:02", state: directory.path)
        let address = try await Self.advertised(relay)
        try await peer.command(["cmd": "connect", "address": address, "timeout": 5])
        try await peer.command(["cmd": "discover"])
        let read = try await peer.command(["cmd": "read", "uuid": "A5C30012-6B1E-4F2A-9D3C-2B7E5F10C4A9"])
        #expect(read["value"] as? String == Data("encrypted".utf8).map { String(format: "%02x", $0) }.joined(), "\(read)")
        try await peer.command(["cmd": "disconnect"])
        #expect(await relay.line(containing: "\"reason\":\"0x16\",\"side\":\"device\"", within: .seconds(5)) != nil)
        let (code, err) = relay.stop()
        #expect(code == 0, "\(err)")
        let paired = try #require(Self.events(relay).first { $0["event"]?.string == "paired" })
        #expect(paired["side"]?.string == "device")
        #expect(paired["method"]?.string == "just-works", "\(paired)")
        #expect(!Self.events(relay).contains { $0["event"]?.string == "paired" && $0["side"]?.string == "app" })
        // The bond is kept in the device side's store.
        let stores = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
        #expect(stores.contains { $0.hasSuffix(".json") }, "\(stores)")
    }

    /// Issue 31, item 4: each ATT operation a client uses goes through, at the smallest MTU (23,
    /// no exchange): discovery, a long read (Read Blob), a write, a write command, and the
    /// device's notifications and indications (each confirmed by the app) — against the generic
    /// characteristics of the secure peripheral, whose writes the peer reports.
    @Test func everyATTOperationGoesThroughAtTheSmallestMTU() async throws {
        let peer = try await Self.peer.value
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let relay = try Self.relay(peer, to: "B0:B0:B0:00:00:02", state: directory.path)
        let address = try await Self.advertised(relay)
        func uuid(_ id: Int) -> String { String(format: "A5C3%04X-6B1E-4F2A-9D3C-2B7E5F10C4A9", id) }
        try await peer.command(["cmd": "connect", "address": address, "timeout": 5])
        let discovered = try await peer.command(["cmd": "discover"])
        #expect((discovered["characteristics"] as? [[String: Any]] ?? []).count >= 8, "\(discovered)")
        // The peer's long value: 300 bytes, (i × 7 + 3) mod 256.
        let long = try await peer.command(["cmd": "read", "uuid": uuid(3)])
        #expect(long["value"] as? String == (0..<300).map { String(format: "%02x", ($0 * 7 + 3) & 0xFF) }.joined(), "\(long)")
        try await peer.command(["cmd": "write", "uuid": uuid(4), "value": "c0ffee", "response": true])
        try await peer.command(["cmd": "write", "uuid": uuid(5), "value": "beef", "response": false])
        try await peer.command(["cmd": "subscribe", "uuid": uuid(6), "indicate": false])
        try await peer.command(["cmd": "subscribe", "uuid": uuid(7), "indicate": true])
        let notified = try await peer.command(["cmd": "secure_notify", "count": 5, "size": 20])
        #expect(notified["count"] as? Int == 5)
        let indicated = try await peer.command(["cmd": "secure_indicate", "count": 3])
        #expect(indicated["confirmed"] as? Int == 3)
        let notifications = try await peer.command(["cmd": "values", "uuid": uuid(6), "count": 5, "timeout": 5])
        #expect((notifications["values"] as? [String])?.count == 5, "\(notifications)")
        // At MTU 23 a notification carries 20 bytes: all of them arrive.
        #expect((notifications["values"] as? [String])?.allSatisfy { $0.count == 40 } == true, "\(notifications)")
        let indications = try await peer.command(["cmd": "values", "uuid": uuid(7), "count": 3, "timeout": 5])
        #expect(indications["values"] as? [String] == ["00000000", "01000000", "02000000"], "\(indications)")
        let writes = try await peer.command(["cmd": "secure_writes"])
        let written = (writes["writes"] as? [[String: Any]] ?? []).compactMap { $0["hex"] as? String }
        #expect(written.suffix(2) == ["c0ffee", "beef"], "\(writes)")
        try await peer.command(["cmd": "disconnect"])
        #expect(await relay.line(containing: "\"reason\":\"0x16\",\"side\":\"device\"", within: .seconds(5)) != nil)
        #expect(relay.stop().code == 0)
        let app = Self.events(relay).filter { $0["side"]?.string == "app" }
        #expect(app.filter { $0["event"]?.string == "indicated" }.count == 3)
        #expect(app.filter { $0["event"]?.string == "notified" }.count == 5)
        #expect(!Self.events(relay).contains { $0["event"]?.string == "mtu" })
    }

    /// Issue 31, item 3: one controller that can be central and peripheral at once (bumble's)
    /// carries both sides, `--hci` and `--to` naming it.
    @Test func oneControllerCarriesBothSides() async throws {
        let peer = try await Self.peer.value
        let relay = try Serving(["--hci", peer.hosts[0].description, "--to", peer.hosts[0].description, Self.mirror, "--advertising", "extended"],
                                command: "relay")
        let scan = try await Self.bodyScan(peer, at: try await Self.advertised(relay))
        #expect(scan["states"] as? [String] == Self.scanStates, "\(scan)")
        #expect(await relay.line(containing: "\"reason\":\"0x16\",\"side\":\"device\"", within: .seconds(5)) != nil)
        let (code, err) = relay.stop()
        #expect(code == 0, "\(err)")
    }

    /// The app leaving in the middle of a scan (the device notifying, a request maybe in flight)
    /// ends the device's link within a second too, and the relay waits for the next app.
    @Test func anAppThatLeavesMidScanEndsTheDevicesLinkWithinASecond() async throws {
        let peer = try await Self.peer.value
        let relay = try Self.relay(peer)
        let address = try await Self.advertised(relay)
        try await peer.command(["cmd": "connect", "address": address, "timeout": 5])
        // Its answer (an error: the link went) does not matter, only that it was under way.
        let scan = Task { _ = try? await peer.command(["cmd": "mirror_scan", "timeout": 2]) }
        #expect(await relay.line(containing: "\"event\":\"notified\"", within: .seconds(5)) != nil)
        try await peer.command(["cmd": "disconnect"])
        #expect(await relay.line(containing: "\"reason\":\"0x16\",\"side\":\"device\"", within: .seconds(2)) != nil)
        #expect(await Self.readvertised(relay))
        _ = await scan.value
        #expect(relay.stop().code == 0)
        let events = Self.events(relay)
        let appEnd = try #require(events.first { $0["side"]?.string == "app" && $0["event"]?.string == "disconnected" }?["t"]?.number)
        let deviceEnd = try #require(events.first { $0["side"]?.string == "device" && $0["event"]?.string == "disconnected" }?["t"]?.number)
        #expect(deviceEnd >= appEnd && deviceEnd - appEnd < 1.0, "app \(appEnd) device \(deviceEnd)")
    }

    /// Whether the relay advertised a second time (after a link ended), within 10 s.
    static func readvertised(_ relay: Serving) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        while clock.now < deadline {
            if relay.all.filter({ $0.contains("\"advertising\"") }).count >= 2 { return true }
            try? await clock.sleep(for: .milliseconds(50))
        }
        return false
    }
}
