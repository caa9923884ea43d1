import BLEProtocol
import HAL
import Testing
@testable import Transports

/// Commands must leave as exactly these bytes (H4 indicator, opcode LE, length, parameters).
@Suite struct HCICommandTests {
    static func h4(_ command: HCICommand) -> [UInt8] { HCIPacket.command(command).h4Bytes }

    @Test func parameterlessCommands() {
        #expect(Self.h4(.reset) == PacketBytes.hex("01 03 0C 00"))
        #expect(Self.h4(.readLocalVersionInformation) == PacketBytes.hex("01 01 10 00"))
        #expect(Self.h4(.readLocalSupportedFeatures) == PacketBytes.hex("01 03 10 00"))
        #expect(Self.h4(.readBufferSize) == PacketBytes.hex("01 05 10 00"))
        #expect(Self.h4(.readBDADDR) == PacketBytes.hex("01 09 10 00"))
        #expect(Self.h4(.leReadBufferSize) == PacketBytes.hex("01 02 20 00"))
        #expect(Self.h4(.leReadLocalSupportedFeatures) == PacketBytes.hex("01 03 20 00"))
        #expect(Self.h4(.leCreateConnectionCancel) == PacketBytes.hex("01 0E 20 00"))
    }

    @Test func masksAndHostSupport() {
        #expect(Self.h4(.setEventMask(0x3DBF_F807_FFFB_FFFF)) == PacketBytes.hex("01 01 0C 08 FF FF FB FF 07 F8 BF 3D"))
        #expect(Self.h4(.leSetEventMask(0x0000_0000_0000_061F)) == PacketBytes.hex("01 01 20 08 1F 06 00 00 00 00 00 00"))
        #expect(Self.h4(.writeLEHostSupport(le: true)) == PacketBytes.hex("01 6D 0C 02 01 00"))
        #expect(Self.h4(.writeLEHostSupport(le: false)) == PacketBytes.hex("01 6D 0C 02 00 00"))
    }

    @Test func scanning() throws {
        #expect(Self.h4(.leSetScanEnable(true, filterDuplicates: false)) == PacketBytes.hex("01 0C 20 02 01 00"))
        #expect(Self.h4(.leSetScanEnable(false, filterDuplicates: true)) == PacketBytes.hex("01 0C 20 02 00 01"))
        #expect(Self.h4(.leSetScanParameters(active: true, interval: 0x0060, window: 0x0030, ownAddressType: 1, filterPolicy: 0))
                == PacketBytes.hex("01 0B 20 07 01 60 00 30 00 01 00"))
        let random = try #require(BLEAddress(string: "C1:A2:A3:A4:A5:A6", defaultKind: .random))
        #expect(Self.h4(.leSetRandomAddress(random)) == PacketBytes.hex("01 05 20 06 A6 A5 A4 A3 A2 C1"))
    }

    @Test func createConnectionLayout() throws {
        let peer = try #require(BLEAddress(string: "C1:A2:A3:A4:A5:A6", defaultKind: .random))
        let command = HCICommand.leCreateConnection(peer: peer, scanInterval: 0x0060, scanWindow: 0x0060, ownAddressType: 0,
                                                    minInterval: 0x0018, maxInterval: 0x0028, latency: 0,
                                                    supervisionTimeout: 0x01F4)
        #expect(command.parameters.count == 25)
        #expect(Self.h4(command) == PacketBytes.hex(
            "01 0D 20 19"
            + " 60 00 60 00"          // scan interval, window
            + " 00"                   // initiator filter policy: use the peer address
            + " 01 A6 A5 A4 A3 A2 C1" // random peer
            + " 00"                   // own address public
            + " 18 00 28 00 00 00 F4 01"
            + " 00 00 00 00"))        // CE lengths
        let publicPeer = try #require(BLEAddress(string: "11:22:33:44:55:66"))
        let second = HCICommand.leCreateConnection(peer: publicPeer, scanInterval: 16, scanWindow: 16, ownAddressType: 1,
                                                   minInterval: 6, maxInterval: 6, latency: 0, supervisionTimeout: 100)
        #expect(Array(second.parameters[5...11]) == PacketBytes.hex("00 66 55 44 33 22 11"))
    }

    @Test func connectionManagement() {
        #expect(Self.h4(.disconnect(handle: 0x0040, reason: 0x13)) == PacketBytes.hex("01 06 04 03 40 00 13"))
        #expect(Self.h4(.leConnectionUpdate(handle: 0x0040, minInterval: 24, maxInterval: 40, latency: 0, supervisionTimeout: 500))
                == PacketBytes.hex("01 13 20 0E 40 00 18 00 28 00 00 00 F4 01 00 00 00 00"))
        #expect(Self.h4(.leRemoteConnectionParameterRequestReply(handle: 0x41, minInterval: 6, maxInterval: 12, latency: 1, timeout: 200))
                == PacketBytes.hex("01 20 20 0E 41 00 06 00 0C 00 01 00 C8 00 00 00 00 00"))
        #expect(Self.h4(.leRemoteConnectionParameterRequestNegativeReply(handle: 0x41, reason: 0x3B))
                == PacketBytes.hex("01 21 20 03 41 00 3B"))
    }

    @Test func opcodeFieldsAndNames() {
        let scanEnable = HCICommand.leSetScanEnable(true, filterDuplicates: false)
        #expect(scanEnable.ogf == 0x08 && scanEnable.ocf == 0x000C)
        #expect(scanEnable.name == "LE Set Scan Enable")
        #expect(HCICommand.reset.ogf == 0x03 && HCICommand.reset.ocf == 0x003)
        #expect(HCICommand.reset.name == "Reset")
        #expect(HCICommand.readBDADDR.name == "Read BD_ADDR")
        #expect(HCICommand(ogf: 0x3F, ocf: 0x001).opcode == 0xFC01)
        #expect(HCICommand(opcode: 0xFC01, parameters: []).name == "0xFC01")
    }

    @Test func framerReadsOurOwnCommandsBack() throws {
        let commands: [HCICommand] = [.reset, .leSetScanEnable(true, filterDuplicates: true), .disconnect(handle: 1, reason: 0x16)]
        var framer = H4Framer()
        #expect(try framer.feed(commands.flatMap(Self.h4)) == commands.map(HCIPacket.command))
    }
}
