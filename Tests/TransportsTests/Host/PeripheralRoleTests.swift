import BLEProtocol
import HAL
import HALFakes
import Testing
@_spi(Fuzzing) @testable import Transports

/// The host's peripheral role (issue 28) and links registered as their Connection Complete is
/// taken (issue 27, item 13), against a scripted controller that says several things in one read.
@Suite(.timeLimit(.minutes(1)))
struct PeripheralRoleTests {
    static let central = BLEAddress(string: "C4:00:00:00:00:01/random")!

    static func connectionComplete(handle: UInt16, peer: BLEAddress, role: UInt8) -> [UInt8] {
        ScriptedController.event(0x3E, [0x01, 0x00] + LittleEndian.u16(handle) + [role, peer.kind == .random ? 1 : 0] + peer.littleEndianBytes
                                 + LittleEndian.u16(0x0018) + LittleEndian.u16(0) + LittleEndian.u16(0x01F4) + [0x00])
    }

    // MARK: issue 27, item 13

    @Test func aLinkThatEndsInTheSameReadAsItOpenedEndsTheConnectAtOnce() async throws {
        let bench = try await HostDefectTests.Bench()
        let host = bench.host
        let attempt = Task { try await host.connect(to: HostDefectTests.peer) }
        await bench.controller.waitForCommand(0x200D)
        // One read: the link opens and ends (0x3E: the peer failed to establish it).
        bench.controller.inject(ScriptedController.connectionComplete(handle: 0x0041, peer: HostDefectTests.peer)
                                + ScriptedController.disconnectionComplete(handle: 0x0041, reason: 0x3E))
        // Either connect already knows (it resumed after the end was taken), or the link it
        // returns ends at once with the controller's reason; never a live link that waits 30 s.
        let ended = DisconnectReason(hciReason: 0x3E)
        do {
            let connection = try await attempt.value
            for await reason in connection.disconnection() {
                #expect(reason == ended)
                break
            }
            await #expect(throws: BLEError.self) { _ = try await connection.bearer.exchangeMTU(185) }
        } catch {
            #expect(error as? BLEError == .disconnected(ended))
        }
    }

    @Test func aPeersRequestInTheSameReadAsTheConnectionIsAnswered() async throws {
        let bench = try await HostDefectTests.Bench()
        let host = bench.host
        let attempt = Task { try await host.connect(to: HostDefectTests.peer) }
        await bench.controller.waitForCommand(0x200D)
        // The peer asks for the MTU exchange in the same read as the link opens.
        bench.controller.inject(ScriptedController.connectionComplete(handle: 0x0042, peer: HostDefectTests.peer)
                                + ScriptedController.att(handle: 0x0042, ATTPDU.exchangeMTURequest(185).encoded))
        let connection = try await attempt.value
        await bench.controller.waitUntil { _, acl in !l2capPayloads(acl, handle: 0x0042, channel: 0x0004).isEmpty }
        let answers = l2capPayloads(bench.controller.aclPackets, handle: 0x0042, channel: 0x0004)
        #expect(answers.first == ATTPDU.exchangeMTUResponse(ATTMTU.preferred).encoded)
        #expect(connection.disconnectReason == nil)
    }

    // MARK: the peripheral role

    @Test func anExtendedSetWithARandomAddressIsGivenItsAddressBeforeItIsEnabled() async throws {
        let bench = try await HostDefectTests.Bench()
        let address = BLEAddress(string: "C2:11:22:33:44:55/random")!
        let data = [UInt8](repeating: 0x11, count: 300)
        try await bench.host.advertise(AdvertisingSetup(form: .extended(data: data), interval: .milliseconds(100), randomAddress: address))
        let advertising = bench.controller.commands.filter { (0x2035...0x2039).contains($0.opcode) }
        #expect(advertising.map(\.opcode) == [0x2036, 0x2035, 0x2037, 0x2037, 0x2039])
        // Connectable, 100 ms (160 × 0.625 ms), own address random.
        #expect(advertising[0].parameters[1...2] == [0x01, 0x00])
        #expect(advertising[0].parameters[3...5] == [0xA0, 0x00, 0x00])
        #expect(advertising[0].parameters[10] == 0x01)
        #expect(advertising[1].parameters == [0x00] + address.littleEndianBytes)
        // 300 bytes: a first fragment of 251, then the last of 49.
        #expect(advertising[2].parameters[0...3] == [0x00, 0x01, 0x01, 251])
        #expect(advertising[3].parameters[0...3] == [0x00, 0x02, 0x01, 49])
        #expect(Array(advertising[2].parameters.dropFirst(4) + advertising[3].parameters.dropFirst(4)) == data)
        #expect(advertising[4].parameters == [0x01, 0x01, 0x00, 0x00, 0x00, 0x00])
        #expect(await bench.host.isAdvertising)
    }

    @Test func legacyAdvertisingSendsParametersDataScanResponseAndEnable() async throws {
        let bench = try await HostDefectTests.Bench()
        try await bench.host.advertise(AdvertisingSetup(form: .legacy(advertisingData: [2, 1, 6], scanResponse: [3, 9, 0x41, 0x42])))
        let advertising = bench.controller.commands.filter { (0x2005...0x200A).contains($0.opcode) }
        #expect(advertising.map(\.opcode) == [0x2006, 0x2008, 0x2009, 0x200A])
        #expect(advertising[0].parameters.count == 15)
        #expect(advertising[0].parameters[4] == 0x00, "ADV_IND")
        #expect(advertising[1].parameters.count == 32)
        #expect(Array(advertising[1].parameters.prefix(4)) == [3, 2, 1, 6])
        #expect(Array(advertising[2].parameters.prefix(5)) == [4, 3, 9, 0x41, 0x42])
        await #expect(throws: BLEError.self) {
            try await bench.host.advertise(AdvertisingSetup(form: .legacy(advertisingData: [UInt8](repeating: 0, count: 32), scanResponse: [])))
        }
    }

    @Test func aCentralsLinkAndItsFirstFramesReachThePeripheralRoleInOrder() async throws {
        let bench = try await HostDefectTests.Bench()
        let events = await bench.host.peripheralRole()
        // The connection, an ATT request and a signalling command, in one read.
        bench.controller.inject(Self.connectionComplete(handle: 0x0050, peer: Self.central, role: 0x01)
                                + ScriptedController.att(handle: 0x0050, ATTPDU.readRequest(handle: 3).encoded)
                                + ScriptedController.l2cap(handle: 0x0050, channel: 0x0006, [0x01, 0x05]))
        var iterator = events.makeAsyncIterator()
        guard case .connected(let info) = await iterator.next() else { Issue.record("no connection"); return }
        #expect(info.handle == 0x0050)
        #expect(info.central == Self.central)
        #expect(await iterator.next() == .frame(handle: 0x0050, L2CAPFrame(channel: 0x0004, payload: ATTPDU.readRequest(handle: 3).encoded)))
        #expect(await iterator.next() == .frame(handle: 0x0050, L2CAPFrame(channel: 0x0006, payload: [0x01, 0x05])))
        // What the peripheral answers goes out on that link.
        try await bench.host.sendL2CAP(handle: 0x0050, channel: 0x0004, payload: ATTPDU.readResponse([7]).encoded)
        await bench.controller.waitUntil { _, acl in !l2capPayloads(acl, handle: 0x0050, channel: 0x0004).isEmpty }
        #expect(l2capPayloads(bench.controller.aclPackets, handle: 0x0050, channel: 0x0004) == [ATTPDU.readResponse([7]).encoded])
        // Ending it waits for the controller's word.
        let host = bench.host
        let ending = Task { await host.endPeripheralLink(0x0050, reason: 0x13) }
        await bench.controller.waitForCommand(0x0406)
        bench.controller.inject(ScriptedController.disconnectionComplete(handle: 0x0050, reason: 0x16))
        await ending.value
        #expect(await iterator.next() == .disconnected(handle: 0x0050, reason: 0x16))
        await #expect(throws: BLEError.self) { try await bench.host.sendL2CAP(handle: 0x0050, channel: 4, payload: [1]) }
    }

    @Test func aCentralConnectingWhileNobodyServesIsRefused() async throws {
        let bench = try await HostDefectTests.Bench()
        bench.controller.inject(Self.connectionComplete(handle: 0x0051, peer: Self.central, role: 0x01))
        await bench.controller.waitForCommand(0x0406)
        let disconnect = bench.controller.commands.last { $0.opcode == 0x0406 }
        #expect(disconnect?.parameters == [0x51, 0x00, 0x13])
    }
}
