import Foundation
import HAL
import PeerSupport
import Testing
@testable import hwprobe

/// hwprobe's central against bumble's pairing peer (Tests/Peers/ble_peer.py, its secure profile:
/// a value that needs authenticated Secure Connections, a passkey it displays), judged by the
/// peer's own events: `pair` bonds, then `gatt` reads the protected value with an encryption from
/// the bond and no pairing; `gatt` alone is refused with 0x05, pairs with the passkey and reads.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct BumbleBondPeerTests {
    static let passkey = "024680"
    /// `A5C30011-…`: the secure profile's authenticated-SC value, "authenticated-sc".
    static let protected = "A5C30011-6B1E-4F2A-9D3C-2B7E5F10C4A9"
    static let protectedHex = Array("authenticated-sc".utf8).map { String(format: "%02x", $0) }.joined()

    static func peer() async throws -> PeerProcess {
        try await PeerProcess.start(["--profile", "secure", "--io", "display", "--passkey", passkey, "--mitm", "--sc-only",
                                     "--adv-interval-ms", "20"])
    }

    static func run(_ arguments: [String], state: String) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func pairThenGattReadsTheProtectedValueWithTheBondAndNoPairing() async throws {
        let peer = try await Self.peer()
        defer { peer.stop() }
        let state = FileManager.default.temporaryDirectory.appending(path: "bumble-bond-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let hci = peer.tcp.description, address = peer.address.description

        let paired = await Self.run(["pair", "--hci", hci, address, "--io", "keyboard", "--passkey", Self.passkey, "--json"], state: state)
        #expect(paired.code == 0, "\(paired.out)\(paired.err)")
        #expect(try JSONShape.parse(paired.out)["method"]?.string == "passkey", "\(paired.out)")
        _ = try await peer.waitForEvent("bonded")
        let mark = try await peer.eventMark()

        let read = await Self.run(["gatt", "--hci", hci, address, "--read", Self.protected, "--json"], state: state)
        #expect(read.code == 0, "\(read.out)\(read.err)")
        #expect(read.out.contains(Self.protectedHex), "\(read.out)")
        #expect(read.err.contains("\"event\":\"encrypted\""), "\(read.err)")
        let changed = try await peer.waitForEvent("encryption_changed", since: mark)
        #expect(changed.string("cause") == "bond" && changed.bool("authenticated") == true, "\(changed)")
        let seen = try await peer.events(since: mark).events.map(\.name)
        #expect(!seen.contains("pairing_started"), "bumble saw a pairing, not an encryption: \(seen)")
    }

    @Test func gattAloneIsRefusedThenPairsWithThePasskeyAndReads() async throws {
        let peer = try await Self.peer()
        defer { peer.stop() }
        let state = FileManager.default.temporaryDirectory.appending(path: "bumble-bond-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let read = await Self.run(["gatt", "--hci", peer.tcp.description, peer.address.description, "--read", Self.protected,
                                   "--passkey", Self.passkey, "--json", "-v"], state: state)
        #expect(read.code == 0, "\(read.out)\(read.err)")
        #expect(read.out.contains(Self.protectedHex), "\(read.out)")
        #expect(read.err.contains("ATT error 0x05 Insufficient Authentication"), "\(read.err)")
        #expect(read.err.contains("\"event\":\"paired\"") && read.err.contains("\"method\":\"passkey\""), "\(read.err)")
        let paired = try await peer.waitForEvent("paired")
        #expect(paired.string("method") == "passkey-entry", "\(paired)")
    }
}
