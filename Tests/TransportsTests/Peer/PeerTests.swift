import Foundation
import HAL
import Testing
@testable import Transports

/// One bumble peer for the whole suite; tests take turns with it.
actor SharedPeer {
    static let shared = SharedPeer()
    private var peer: PeerProcess?
    private var failure: String?

    func get() async throws -> PeerProcess {
        if let peer { return peer }
        if let failure { throw PeerProcess.StartFailure(description: failure) }
        do {
            let started = try await PeerProcess.start(["--pty"])
            peer = started
            return started
        } catch {
            failure = "\(error)"
            throw error
        }
    }
}

let peerAvailable = PeerProcess.python != nil

/// Our host stack against bumble's virtual controller and peripheral (nobody here wrote bumble).
@Suite(.serialized, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PeerTests {
    func central(_ configure: (inout HCIHost.Configuration) -> Void = { _ in }) async throws -> (PeerProcess, BLECentral) {
        let peer = try await SharedPeer.shared.get()
        var configuration = HCIHost.Configuration()
        configure(&configuration)
        let central = try await BLECentral.open(peer.tcp, configuration: configuration)
        return (peer, central)
    }

    func find(_ address: BLEAddress, on central: BLECentral) async throws -> DiscoveredDevice {
        for try await device in central.discover() where device.address.bytes == address.bytes && device.name != nil {
            return device
        }
        throw PeerProcess.StartFailure(description: "discovery ended without the peer")
    }

    @Test func initialisationLearnsTheController() async throws {
        let (_, central) = try await central()
        defer { Task { await central.close() } }
        #expect(await central.host.localVersion != nil)
        let buffer = await central.host.aclBufferSize
        #expect(buffer.length >= 27 && buffer.count >= 1)
        await central.close()
    }

    @Test func scanningSeesTheAdvertisement() async throws {
        let (peer, central) = try await central()
        let device = try await find(peer.address, on: central)
        #expect(device.name == "hwprobe-peer")
        #expect(device.rssi < 0)
        #expect(!device.advertisement.allServiceUUIDs.isEmpty)
        #expect(device.advertisement.manufacturerData[0xFFFF] != nil)
        await central.close()
    }

    @Test func fullDiscoveryMatchesThePeersOwnDatabase() async throws {
        let (peer, central) = try await central()
        let device = try await find(peer.address, on: central)
        let connection = try await central.connect(device.address)
        let mtu = try await connection.bearer.exchangeMTU(247)
        #expect(mtu >= 23)
        let trees = try await connection.gatt.discoverAll()
        let answer = try await peer.command(["cmd": "database"])
        let theirs = ((answer["database"] as? [String: Any])?["services"] as? [[String: Any]]) ?? []
        #expect(trees.count == theirs.count)
        for (ours, theirs) in zip(trees, theirs) {
            #expect(ours.service.uuid.description == theirs["uuid"] as? String)
            #expect(Int(ours.service.start) == theirs["start"] as? Int)
            #expect(Int(ours.service.end) == theirs["end"] as? Int)
            let characteristics = (theirs["characteristics"] as? [[String: Any]]) ?? []
            #expect(ours.characteristics.count == characteristics.count)
            for (c, t) in zip(ours.characteristics, characteristics) {
                #expect(c.uuid.description == t["uuid"] as? String)
                #expect(Int(c.valueHandle) == t["handle"] as? Int)
                #expect(c.properties.names == (t["properties"] as? [String] ?? []))
                let descriptors = (t["descriptors"] as? [[String: Any]]) ?? []
                #expect(c.descriptors.map { $0.uuid.description } == descriptors.compactMap { $0["uuid"] as? String })
            }
        }
        await connection.disconnect()
        #expect(connection.disconnectReason == .localHostTerminated)
        await central.close()
    }
}
