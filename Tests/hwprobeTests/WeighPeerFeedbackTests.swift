import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `weigh`'s refusals and what it says while it works, against bumble peers through our own host
/// stack: exit 3 with the words at once for what is not a scale, "not found" when the window ends.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct WeighPeerFeedbackTests {
    /// The same peer process DriverPeerTests uses for the mirror.
    static let mirrorPeer = DriverPeerTests.mirrorPeer

    func run(_ arguments: [String]) async -> TimedRun { await TimedRun.run(arguments) }

    @Test func weighAtTheMirrorPeerFailsAtOnceSayingWhatItIs() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await run(["weigh", "--hci", peer.tcp.description, peer.address.description, "--timeout", "20", "--json"])
        #expect(result.code == 3)
        let error = try JSONShape.parse(result.out)["error"]
        #expect(error?["kind"]?.string == "device")
        #expect(error?["message"]?.string?.hasPrefix("\(peer.address) is a body-scan mirror (mirror-v1), not a scale") == true,
                "\(result.out)")
        #expect(result.seconds < 5, "well under the 20 s timeout: \(result.seconds) s")
    }

    @Test func weighAtAPeripheralNoDriverClaimsSaysWhatItAdvertises() async throws {
        let peer = try await SharedPeers.shared.peer()
        let result = await run(["weigh", "--hci", peer.tcp.description, peer.address.description, "--timeout", "20"])
        #expect(result.code == 3)
        #expect(result.err.contains("\(peer.address) (\"hwprobe-peer\") is not a scale: no driver claims it as a scale "
                                    + "(it advertises services 180F)"), "\(result.err)")
        #expect(result.seconds < 5, "\(result.seconds) s")
    }

    @Test func weighAtAnAddressNobodyAdvertisesIsNotFoundWhenTheWindowEnds() async throws {
        let peer = try await SharedPeers.shared.peer()
        // --timeout 3 is shorter than the 10 s window, so the window is 3 s: "not found", not "no stable weight".
        let result = await run(["weigh", "--hci", peer.tcp.description, "AA:BB:CC:00:00:99", "--timeout", "3", "--json"])
        #expect(result.code == 3)
        let error = try JSONShape.parse(result.out)["error"]
        #expect(error?["kind"]?.string == "device")
        let message = try #require(error?["message"]?.string)
        #expect(message.hasPrefix("AA:BB:CC:00:00:99 not found: it did not advertise within 3 s on \(peer.tcp)"), "\(message)")
        #expect(message.contains("hwprobe-peer"), "names what it saw instead")
        #expect(result.seconds >= 3 && result.seconds < 6, "\(result.seconds) s")
    }

    /// Waits (with a deadline, polling the peer's control channel) until our host has enabled
    /// indications on Weight Measurement.
    func subscribed(_ peer: PeerProcess) async throws {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(15))
        while clock.now < end {
            let state = try await peer.command(["cmd": "state"])
            if let kinds = (state["subscriptions"] as? [String: [String]])?["2A9D"], kinds.contains("indicate") { return }
            try await clock.sleep(for: .milliseconds(50)) // polling another process's state
        }
        Issue.record("our host never subscribed to 2A9D")
    }

    @Test func verboseWeighSaysEachStepOfTheHostStack() async throws {
        let peer = try await SharedPeers.shared.peer(["--profile", "scale"])
        let weighing = Task { await run(["weigh", "-v", "--hci", peer.tcp.description, peer.address.description, "--timeout", "20", "--json"]) }
        try await subscribed(peer)
        // After the peer's own series (70.0, 72.3, 72.35, 0.2 s apart), two equal readings settle it.
        _ = try? await peer.command(["cmd": "weigh", "kg": [72.35, 72.35, 72.35, 72.35], "gap_ms": 300])
        let result = await weighing.value
        #expect(result.code == 0, "\(result.err)")
        #expect(try JSONShape.parse(result.out)["weightKg"]?.number == 72.35, "stdout is still exactly one JSON object")
        let said = result.lines
        let address = peer.address.description
        #expect(said.first == "opening \(peer.tcp)…")
        #expect(said.contains("controller \(peer.tcp) opened, address A0:A0:A0:00:00:01"))
        #expect(said.filter { $0.hasPrefix("found \(address) ") } == ["found \(address) (public) \"WS Scale\" -50 dBm: standard-scale by service 181D"],
                "each peripheral once")
        #expect(said.contains("connecting to WS Scale (\(address))…"))
        #expect(said.contains("connecting to \(address) (public)"))
        let connected = try #require(said.first { $0.hasPrefix("connected to \(address) (public), handle 0x") })
        let link = String(connected.suffix(6))
        #expect(said.contains { $0.hasPrefix("link \(link): ATT MTU ") })
        #expect(said.contains { $0.hasPrefix("link \(link): subscribed to indications of Weight Measurement (2A9D), handle 0x") })
        // The scale has no Body Composition service: looking for it ends with Attribute Not Found.
        #expect(said.contains { $0.hasPrefix("link \(link): ATT error 0x0A Attribute Not Found for Find By Type Value Request (opcode 0x06)") })
        #expect(said.contains("70.00 kg, settling…"))
    }
}
