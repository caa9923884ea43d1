import Foundation
import HAL
import PeerSupport
import Testing
@testable import Transports

/// Our host stack against bumble's virtual controller and peripheral (nobody here wrote bumble).
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PeerTests {
    func central(_ configure: (inout HCIHost.Configuration) -> Void = { _ in }) async throws -> (PeerProcess, BLECentral) {
        let peer = try await SharedPeers.shared.peer()
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

/// A connected, discovered peer for the data-path tests.
struct Session {
    let peer: PeerProcess
    let central: BLECentral
    let connection: BLEConnection
    let characteristics: [BluetoothUUID: GATTCharacteristic]

    static func open(_ configure: (inout HCIHost.Configuration) -> Void = { _ in }, peerArguments: [String] = ["--pty"]) async throws -> Session {
        let peer = try await SharedPeers.shared.peer(peerArguments)
        var configuration = HCIHost.Configuration()
        configure(&configuration)
        let central = try await BLECentral.open(peer.tcp, configuration: configuration)
        let connection = try await central.connect(peer.address)
        _ = try await connection.bearer.exchangeMTU(247)
        var characteristics: [BluetoothUUID: GATTCharacteristic] = [:]
        for tree in try await connection.gatt.discoverAll() {
            for c in tree.characteristics { characteristics[c.uuid] = c }
        }
        return Session(peer: peer, central: central, connection: connection, characteristics: characteristics)
    }

    static func uuid(_ id: UInt16) -> BluetoothUUID {
        BluetoothUUID(string: String(format: "A5C3%04X-6B1E-4F2A-9D3C-2B7E5F10C4A9", id))!
    }

    func characteristic(_ id: UInt16) throws -> GATTCharacteristic {
        try #require(characteristics[Self.uuid(id)])
    }

    func close() async {
        await connection.disconnect()
        await central.close()
    }
}

extension PeerTests {
    @Test func readsShortAndLongValues() async throws {
        let session = try await Session.open()
        #expect(try await session.connection.gatt.read(try session.characteristic(0x0002).valueHandle) == Array("hwprobe".utf8))
        let long = try await session.connection.gatt.read(try session.characteristic(0x0003).valueHandle)
        let expected: [UInt8] = (0..<300).map { (i: Int) -> UInt8 in UInt8((i * 7 + 3) & 0xFF) }
        #expect(long == expected)
        await session.close()
    }

    @Test func readNotPermittedIsATypedATTError() async throws {
        let session = try await Session.open()
        let handle = try session.characteristic(0x0004).valueHandle
        let expected = BLEError.att(ATTFailure(code: 0x02, handle: handle, requestOpcode: 0x0A))
        await #expect(throws: expected) { _ = try await session.connection.gatt.read(handle) }
        await session.close()
    }

    @Test func writesWithAndWithoutResponseArrive() async throws {
        let session = try await Session.open()
        _ = try await session.peer.command(["cmd": "writes", "clear": true])
        try await session.connection.gatt.write(try session.characteristic(0x0004).valueHandle, [0xDE, 0xAD, 0xBE, 0xEF])
        try await session.connection.gatt.writeWithoutResponse(try session.characteristic(0x0005).valueHandle, [0x01, 0x02])
        // A write with response after the command: when it is answered, the command has arrived too.
        try await session.connection.gatt.write(try session.characteristic(0x0004).valueHandle, [0x00])
        let writes = (try await session.peer.command(["cmd": "writes"])["writes"] as? [[String: Any]]) ?? []
        #expect(writes.compactMap { $0["hex"] as? String } == ["deadbeef", "0102", "00"])
        #expect(writes.compactMap { $0["characteristic"] as? String } == ["write", "writeWithoutResponse", "write"])
        await session.close()
    }

    @Test func notificationsArriveInOrder() async throws {
        let session = try await Session.open()
        let values = try await session.connection.gatt.subscribe(try session.characteristic(0x0006))
        let answer = try await session.peer.command(["cmd": "notify", "count": 200, "size": 20])
        #expect(answer["ok"] as? Bool == true)
        var sequence: [UInt32] = []
        for await value in values {
            sequence.append(UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24)
            if sequence.count == 200 { break }
        }
        #expect(sequence == Array(0..<200))
        await session.close()
    }

    @Test func indicationsAreConfirmed() async throws {
        let session = try await Session.open()
        let values = try await session.connection.gatt.subscribe(try session.characteristic(0x0007))
        let answer = try await session.peer.command(["cmd": "indicate", "count": 10])
        #expect(answer["confirmed"] as? Int == 10)
        var received = 0
        for await _ in values {
            received += 1
            if received == 10 { break }
        }
        #expect(received == 10)
        await session.close()
    }

    @Test func thePeripheralDisconnectingEndsEverything() async throws {
        let session = try await Session.open()
        let ended = session.connection.disconnection()
        _ = try await session.peer.command(["cmd": "disconnect", "reason": 8])
        var reason: DisconnectReason?
        for await r in ended { reason = r }
        #expect(reason == .supervisionTimeout)
        await #expect(throws: BLEError.disconnected(.supervisionTimeout)) {
            _ = try await session.connection.gatt.read(try session.characteristic(0x0002).valueHandle)
        }
        await session.central.close()
    }

    @Test func aSilentPeerMeetsTheATTTimeout() async throws {
        let session = try await Session.open { $0.attTimeout = .milliseconds(800) }
        _ = try await session.peer.command(["cmd": "blackhole", "on": true])
        let handle = try session.characteristic(0x0002).valueHandle
        await #expect(throws: BLEError.attTimedOut("Read of handle 0x\(String(format: "%04X", handle))")) {
            _ = try await session.connection.gatt.read(handle)
        }
        // After a transaction timeout the bearer takes no more requests.
        await #expect(throws: BLEError.self) { _ = try await session.connection.gatt.read(handle) }
        await session.close()
    }

    @Test func malformedPDUsAreDroppedAndTheLinkGoesOn() async throws {
        let session = try await Session.open()
        _ = try await session.peer.command(["cmd": "raw_att", "hex": "1b"])            // notification without a handle
        _ = try await session.peer.command(["cmd": "raw_att", "hex": "0b0102"])        // an unsolicited, short Read Response
        _ = try await session.peer.command(["cmd": "raw_l2cap", "cid": 5, "hex": "12010200"]) // a truncated parameter update
        _ = try await session.peer.command(["cmd": "raw_l2cap", "cid": 0x0040, "hex": "00"])  // a channel we don't have
        #expect(try await session.connection.gatt.read(try session.characteristic(0x0002).valueHandle) == Array("hwprobe".utf8))
        #expect(session.connection.bearer.malformedPDUs >= 1)
        await session.close()
    }
}

extension PeerTests {
    @Test func garbageOnTheH4StreamFailsClearly() async throws {
        let peer = try await SharedPeers.shared.peer()
        let central = try await BLECentral.open(peer.tcp)
        _ = try await peer.command(["cmd": "garbage_h4", "hex": "ff0102"])
        var failure: BLEError?
        for _ in 0..<50 {
            do { _ = try await central.host.send(.readBDADDR) } catch { failure = error; break }
        }
        guard case .protocolError? = failure else {
            Issue.record("expected a protocol error, got \(String(describing: failure))")
            await central.close()
            return
        }
        await central.close()
    }

    @Test func aCommandTheControllerNeverAnswersTimesOut() async throws {
        let peer = try await SharedPeers.shared.peer()
        var configuration = HCIHost.Configuration()
        configuration.commandTimeout = .milliseconds(500)
        let central = try await BLECentral.open(peer.tcp, configuration: configuration)
        _ = try await peer.command(["cmd": "mute_controller", "opcode": "0x1009"])
        await #expect(throws: BLEError.commandTimedOut("Read BD_ADDR")) { _ = try await central.host.send(.readBDADDR) }
        // The lost credit is taken back: the next command goes through.
        _ = try await peer.command(["cmd": "mute_controller", "opcode": "0x1009", "on": false])
        #expect(try await central.host.complete(.readLocalVersionInformation).first == 0)
        await central.close()
    }

    @Test func theSameStackWorksOverAUARTOnAPty() async throws {
        let peer = try await SharedPeers.shared.peer()
        let pty = try #require(peer.pty)
        let central = try await BLECentral.open(.uart(path: pty, baud: 1_000_000, rtscts: true))
        var seen: DiscoveredDevice?
        for try await device in central.discover() where device.address.bytes == peer.address.bytes && device.name != nil {
            seen = device
            break
        }
        #expect(seen?.name == "hwprobe-peer")
        let connection = try await central.connect(peer.address)
        #expect(try await connection.gatt.primaryServices().count >= 3)
        await connection.disconnect()
        await central.close()
    }

    @Test func legacyAndExtendedReportsBothParse() async throws {
        for arguments in [["--legacy-reports"], ["--extended"]] {
            let peer = try await SharedPeers.shared.peer(arguments)
            let central = try await BLECentral.open(peer.tcp)
            var seen: DiscoveredDevice?
            for try await device in central.discover() where device.address.bytes == peer.address.bytes && device.name != nil {
                seen = device
                break
            }
            #expect(seen?.name == "hwprobe-peer", "\(arguments)")
            if arguments == ["--extended"] {
                #expect(seen?.advertisement.serviceUUIDs.contains(Session.uuid(0x0001)) == true)
            }
            await central.close()
        }
    }
}

extension PeerTests {
    @Test func longWritesAreFragmentedToTheControllersBuffers() async throws {
        let session = try await Session.open()
        let buffer = await session.central.host.aclBufferSize
        _ = try await session.peer.command(["cmd": "writes", "clear": true])
        let value: [UInt8] = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try await session.connection.gatt.write(try session.characteristic(0x0004).valueHandle, value)
        let writes = (try await session.peer.command(["cmd": "writes"])["writes"] as? [[String: Any]]) ?? []
        let hex = value.map { String(format: "%02x", $0) }.joined()
        #expect(writes.compactMap { $0["hex"] as? String } == [hex])
        #expect(buffer.length < 200 + 7, "the PDU needed more than one ACL fragment")
        await session.close()
    }

    @Test func aServiceIsFoundByItsUUID() async throws {
        let session = try await Session.open()
        let battery = try await session.connection.gatt.primaryServices(uuid: BluetoothUUID(0x180F))
        #expect(battery.count == 1)
        let characteristics = try await session.connection.gatt.characteristics(of: try #require(battery.first))
        #expect(characteristics.map(\.uuid) == [BluetoothUUID(0x2A19)])
        #expect(try await session.connection.gatt.read(characteristics[0].valueHandle) == [87])
        #expect(try await session.connection.gatt.primaryServices(uuid: BluetoothUUID(0x1234)).isEmpty)
        await session.close()
    }

    @Test func aDisconnectionMidDiscoveryFailsTheDiscoveryCleanly() async throws {
        let peer = try await SharedPeers.shared.peer()
        let central = try await BLECentral.open(peer.tcp)
        let connection = try await central.connect(peer.address)
        _ = try await peer.command(["cmd": "delay", "ms": 150])
        let discovery = Task { () -> BLEError? in
            do throws(BLEError) {
                _ = try await connection.gatt.discoverAll()
                return nil
            } catch {
                return error
            }
        }
        _ = try await peer.command(["cmd": "disconnect", "reason": 19])
        let failure = await discovery.value
        #expect(failure == BLEError.disconnected(.remoteUserTerminated))
        await central.close()
    }

    @Test func connectingToSomethingThatIsNotThereTimesOut() async throws {
        let peer = try await SharedPeers.shared.peer()
        var configuration = HCIHost.Configuration()
        configuration.connectTimeout = .milliseconds(700)
        let central = try await BLECentral.open(peer.tcp, configuration: configuration)
        let nobody = try #require(BLEAddress(string: "12:34:56:78:9A:BC"))
        await #expect(throws: BLEError.connectionTimedOut(nobody)) { _ = try await central.connect(nobody) }
        // The cancelled attempt left the controller usable.
        let connection = try await central.connect(peer.address)
        #expect(try await connection.gatt.primaryServices().count >= 3)
        await connection.disconnect()
        await central.close()
    }

    @Test func aParameterUpdateRequestIsAcceptedAndTheLinkGoesOn() async throws {
        let session = try await Session.open()
        // LE signalling: Connection Parameter Update Request, identifier 7, 30–50 ms, latency 0, 5 s timeout.
        _ = try await session.peer.command(["cmd": "raw_l2cap", "cid": 5, "hex": "12070800180028000000f401"])
        #expect(try await session.connection.gatt.read(try session.characteristic(0x0002).valueHandle) == Array("hwprobe".utf8))
        await session.close()
    }
}
