import Foundation
import HAL
import PeerSupport
import Testing
@testable import Transports

/// The pairing peer (Tests/Peers, profile `secure`: bumble's Security Manager with its stock
/// defects fixed) as our host meets it before the host pairs: its protected characteristics
/// refuse an unpaired link, and its own events, read through PeerSupport's `PeerEvent` helpers,
/// say what it saw. (The pairing itself is tested once the host routes SMP: issue 29.)
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PairingPeerTests {
    static let arguments = ["--profile", "secure", "--io", "display", "--passkey", "123456", "--mitm"]

    @Test func protectedCharacteristicsRefuseAnUnpairedLinkAndThePeerSaysWhatItSaw() async throws {
        let peer = try await SharedPeers.shared.peer(Self.arguments)
        try await peer.removeBonds()
        let mark = try await peer.eventMark()
        let session = try await Session.open(peerArguments: Self.arguments)
        for id: UInt16 in [0x0011, 0x0012] {
            let handle = try session.characteristic(id).valueHandle
            // No bond with us: pairing is needed, Insufficient Authentication (not Encryption).
            let expected = BLEError.att(ATTFailure(code: 0x05, handle: handle, requestOpcode: 0x0A))
            await #expect(throws: expected) { _ = try await session.connection.gatt.read(handle) }
        }
        #expect(try await session.connection.gatt.read(try session.characteristic(0x0002).valueHandle) == Array("hwprobe".utf8))

        let connected = try await peer.waitForEvent("connected", since: mark)
        #expect(connected.string("role") == "peripheral")
        #expect(connected.string("peer") == "A0:A0:A0:00:00:01")
        let state = try await peer.checkedCommand(["cmd": "state"])
        let refusals = (state["refusals"] as? [[String: Any]] ?? []).suffix(2)
        #expect(refusals.compactMap { $0["error"] as? Int } == [0x05, 0x05])
        let security = state["security"] as? [String: Any] ?? [:]
        #expect(security["encrypted"] as? Bool == false)
        #expect(try await peer.events(since: mark).events.allSatisfy { $0.name != "pairing_started" })

        await session.close()
        let disconnected = try await peer.waitForEvent("disconnected", since: mark)
        #expect(disconnected.int("reason") != nil)
        // A wait the peer gives up on is an error, after the peer's own deadline.
        await #expect(throws: PeerProcess.CommandFailure.self) {
            _ = try await peer.waitForEvent("paired", since: mark, timeout: .milliseconds(100))
        }
    }

    @Test func pairingKnobsAreTakenOrRefusedWithAReason() async throws {
        let peer = try await SharedPeers.shared.peer(Self.arguments)
        try await peer.configurePairing(["compare": "no", "smpTimeout": 5])
        try await peer.pairingFault("silent", at: "random")
        try await peer.enterPasskey(0)
        await #expect(throws: PeerProcess.CommandFailure.self) { try await peer.pairingFault("nonsense") }
        await #expect(throws: PeerProcess.CommandFailure.self) { try await peer.configurePairing(["io": "telepathy"]) }
        let pairing = try await peer.checkedCommand(["cmd": "pairing"])["pairing"] as? [String: Any] ?? [:]
        let options = pairing["options"] as? [String: Any] ?? [:]
        #expect(options["compare"] as? String == "no")
        #expect(options["passkey"] as? String == "123456")
        #expect((pairing["faults"] as? [[String: Any]])?.last?["at"] as? String == "random")
        #expect(pairing["irkNonZero"] as? Bool == true)
        try await peer.checkedCommand(["cmd": "pairing_fault", "fault": "clear"])
        try await peer.configurePairing(["compare": "yes", "smpTimeout": 30])
    }
}
