import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `-v` against bumble peers: one line per event of our host stack, on stderr, whichever command
/// opened the controller.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct VerbosePeerTests {
    /// The same peer process DriverPeerTests uses for the mirror.
    static let mirrorPeer = DriverPeerTests.mirrorPeer

    func run(_ arguments: [String]) async -> TimedRun { await TimedRun.run(arguments) }

    @Test func verboseGattSaysTheConnectionTheMTUAndEachATTError() async throws {
        let peer = try await SharedPeers.shared.peer()
        let result = await run(["gatt", "-v", "--hci", peer.tcp.description, peer.address.description, "--json"])
        #expect(result.code == 0, "\(result.err)")
        let mtu = try #require(try JSONShape.parse(result.out)["mtu"]?.number)
        let said = result.lines
        #expect(said.first == "controller \(peer.tcp) opened, address A0:A0:A0:00:00:01")
        #expect(said.contains("found \(peer.address) (public) \"hwprobe-peer\" -50 dBm: no driver claims it (services 180F)"))
        let connected = try #require(said.first { $0.hasPrefix("connected to \(peer.address) (public), handle 0x") })
        let link = String(connected.suffix(6))
        #expect(said.contains("link \(link): ATT MTU \(Int(mtu))"))
        #expect(said.contains { $0.hasPrefix("link \(link): ATT error 0x0A Attribute Not Found for Read By Group Type Request (opcode 0x10), handle 0x") })
        #expect(said.last == "link \(link) closed: we ended the connection")
    }

    @Test func verboseScanReachesTheHostStackThroughTheTransportFactory() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await run(["scan", "-v", "--hci", peer.tcp.description, "--yes", "--json"])
        #expect(result.code == 0, "\(result.err.suffix(600))")
        #expect(try JSONShape.parse(result.out)["outcome"]?.string == "complete")
        let said = result.lines
        #expect(said.contains("found \(peer.address) (public) \"Mirror 4F2A\" -50 dBm: mirror-v1 by manufacturer FFFF data 4D 52"))
        for name in ["scanState", "scale", "alignment"] {
            #expect(said.contains { $0.contains("subscribed to notifications of mirror \(name) (7B9E00") }, "\(name)")
        }
    }

    @Test func verboseListOpensTheControllerAndSaysEachPeripheralOnce() async throws {
        let peer = try await SharedPeers.shared.peer()
        let result = await run(["list", "-v", "--hci", peer.tcp.description, "--scan-seconds", "1", "--json"])
        #expect(result.code == 0)
        let said = result.lines
        #expect(said.first == "opening \(peer.tcp)…")
        #expect(said.contains("controller \(peer.tcp) opened, address A0:A0:A0:00:00:01"))
        #expect(said.contains("scanning \(peer.tcp) for peripherals: 1 s left"))
        #expect(said.filter { $0.hasPrefix("found \(peer.address) ") }.count == 1, "the peer advertises ten times a second: \(said)")
        let entry = try JSONShape.parse(result.out)["peripherals"]?.array?.first { $0["address"]?.string == peer.address.description }
        #expect(entry?["addressType"]?.string == "public")
    }
}
