import Foundation
import HAL
import PeerSupport
import Testing
@testable import hwprobe

/// Resolvable private addresses against bumble (issue 29): a bumble peripheral bonds with
/// `hwprobe pair`, distributing its IRK, then advertises only from a private address made with
/// that IRK (peerkit/privacy.py, our own reading of `ah`, not bumble's) and changes it. `list`
/// shows the device under its identity with the private address it was resolved from, and
/// `gatt IDENTITY --read` finds it behind each new address and reads a value that needs
/// encryption with the bond's key, no new pairing. The peer's own events judge: the address its
/// link was made at, an encryption caused by the bond, no pairing started. bumble's link only
/// delivers a connection to an address that is advertising, so a connection to the identity
/// itself would not reach it.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PrivateAddressPeerTests {
    /// `secure`'s value that needs any encryption: "encrypted".
    static let encrypted = "A5C30012-6B1E-4F2A-9D3C-2B7E5F10C4A9"
    static let encryptedHex = Array("encrypted".utf8).map { String(format: "%02x", $0) }.joined()

    static func run(_ arguments: [String], state: String) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func aBondedPeerBehindChangingPrivateAddressesIsListedAndReadUnderItsIdentity() async throws {
        let peer = try await PeerProcess.start(["--profile", "secure", "--address", "B0:B0:B0:00:00:2B", "--io", "none",
                                                "--adv-interval-ms", "20"])
        defer { peer.stop() }
        let state = FileManager.default.temporaryDirectory.appending(path: "rpa-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let hci = peer.tcp.description, identity = peer.address.description

        let paired = await Self.run(["pair", "--hci", hci, identity, "--json"], state: state)
        #expect(paired.code == 0, "\(paired.out)\(paired.err)")
        _ = try await peer.waitForEvent("bonded")
        _ = try await peer.waitForEvent("disconnected")
        let bonds = await Self.run(["bonds", "--hci", hci, "--json"], state: state)
        #expect(bonds.out.contains("\"irk\""), "the peer distributed no IRK: \(bonds.out)")

        var seenAt: Set<String> = []
        for round in 0..<2 {
            let made = try await peer.checkedCommand(["cmd": "private_address"])
            let rpa = try #require(made["address"] as? String)
            #expect(rpa != identity)
            let mark = try await peer.eventMark()

            let list = await Self.run(["list", "--hci", hci, "--scan-seconds", "1", "--json"], state: state)
            let entries = try JSONShape.parse(list.out)["peripherals"]?.array ?? []
            let entry = entries.first { $0["address"]?.string == identity }
            #expect(entry?["resolvedFrom"]?.string == rpa, "round \(round): \(list.out)")
            #expect(!entries.contains { $0["address"]?.string == rpa }, "the private address listed as a device of its own")

            let read = await Self.run(["gatt", "--hci", hci, identity, "--read", Self.encrypted, "--json"], state: state)
            #expect(read.code == 0, "round \(round): \(read.out)\(read.err)")
            #expect(read.out.contains(Self.encryptedHex), "\(read.out)")
            let connected = try await peer.waitForEvent("connected", since: mark)
            #expect(connected.string("at") == rpa + "/random", "the peer was reached at \(connected)")
            seenAt.insert(connected.string("at") ?? "")
            let changed = try await peer.waitForEvent("encryption_changed", since: mark)
            #expect(changed.string("cause") == "bond", "\(changed)")
            let names = try await peer.events(since: mark).events.map(\.name)
            #expect(!names.contains("pairing_started"), "bumble saw a pairing, not an encryption: \(names)")
            _ = try await peer.waitForEvent("disconnected", since: mark)
        }
        #expect(seenAt.count == 2, "the same private address twice: \(seenAt)")
    }
}
