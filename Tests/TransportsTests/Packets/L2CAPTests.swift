import BLEProtocol
import Testing
@testable import Transports

@Suite struct L2CAPFrameTests {
    @Test func parsesAndEncodesAnATTFrame() throws {
        let bytes = PacketBytes.hex("03 00 04 00 02 F7 00")
        let frame = try L2CAPFrame(parsing: bytes)
        #expect(frame == L2CAPFrame(channel: L2CAPFrame.att, payload: PacketBytes.hex("02 F7 00")))
        #expect(frame.encoded == bytes)
    }

    @Test func roundTrips() throws {
        for frame in [L2CAPFrame(channel: L2CAPFrame.leSignaling, payload: []),
                      L2CAPFrame(channel: L2CAPFrame.securityManager, payload: [1, 2, 3, 4, 5]),
                      L2CAPFrame(channel: 0x0040, payload: Array(repeating: 0xAB, count: 600))] {
            #expect(try L2CAPFrame(parsing: frame.encoded) == frame)
        }
    }

    @Test func lengthMustMatch() {
        #expect(throws: HCIParseError.self) { try L2CAPFrame(parsing: PacketBytes.hex("04 00 04 00 02 F7 00")) }
        #expect(throws: HCIParseError.self) { try L2CAPFrame(parsing: PacketBytes.hex("02 00 04 00 02 F7 00")) }
        #expect(throws: HCIParseError.self) { try L2CAPFrame(parsing: PacketBytes.hex("03 00 04")) }
        #expect(throws: HCIParseError.self) { try L2CAPFrame(parsing: []) }
    }
}

@Suite struct LESignalingPacketTests {
    @Test func connectionParameterUpdateRequest() throws {
        let bytes = PacketBytes.hex("12 01 08 00 18 00 28 00 00 00 F4 01")
        let packet = try LESignalingPacket(parsing: bytes)
        #expect(packet == .connectionParameterUpdateRequest(identifier: 1, minInterval: 24, maxInterval: 40,
                                                            latency: 0, timeout: 500))
        #expect(packet.identifier == 1)
        #expect(packet.encoded == bytes)
    }

    @Test func connectionParameterUpdateResponse() throws {
        let accepted = LESignalingPacket.connectionParameterUpdateResponse(identifier: 1, result: 0)
        #expect(accepted.encoded == PacketBytes.hex("13 01 02 00 00 00"))
        #expect(try LESignalingPacket(parsing: PacketBytes.hex("13 07 02 00 01 00"))
                == .connectionParameterUpdateResponse(identifier: 7, result: 1))
    }

    @Test func commandRejectAndOthersRoundTrip() throws {
        let packets: [LESignalingPacket] = [
            .commandReject(identifier: 2, reason: 0x0000, data: []),
            .commandReject(identifier: 3, reason: 0x0002, data: [0x40, 0x00, 0x41, 0x00]),
            .other(code: 0x14, identifier: 4, data: PacketBytes.hex("80 00 40 00 17 00 17 00 0A 00")),
            .connectionParameterUpdateRequest(identifier: 9, minInterval: 6, maxInterval: 3200, latency: 499, timeout: 3200),
        ]
        for packet in packets {
            #expect(try LESignalingPacket(parsing: packet.encoded) == packet)
        }
        #expect(LESignalingPacket.commandReject(identifier: 2, reason: 0, data: []).encoded == PacketBytes.hex("01 02 02 00 00 00"))
        #expect(packets.map(\.identifier) == [2, 3, 4, 9])
    }

    @Test func malformedCommandsThrow() {
        let bad = [
            "12 01 06 00 18 00 28 00 00 00",          // update request of 6 bytes
            "12 01 08 00 18 00 28 00 00 00 F4",       // length says 8, 7 present
            "13 01 03 00 00 00 00",                   // response of 3 bytes
            "01 02 01 00 00",                         // reject without a whole reason
            "12 01",                                  // no length
            "",
        ]
        for hex in bad {
            #expect(throws: HCIParseError.self, "\(hex)") { try LESignalingPacket(parsing: PacketBytes.hex(hex)) }
        }
    }
}
