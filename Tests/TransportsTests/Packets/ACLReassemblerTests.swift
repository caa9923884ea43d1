import BLEProtocol
import Testing
@testable import Transports

@Suite struct ACLReassemblerTests {
    /// An Exchange MTU Request on the ATT channel: basic header (length 3, CID 4), then the PDU.
    static let pdu = PacketBytes.hex("03 00 04 00 02 F7 00")

    @Test func everySplitGivesTheSameFrame() {
        for cut in 1..<Self.pdu.count {
            var reassembler = ACLReassembler()
            #expect(reassembler.add(ACLPacket(handle: 0x40, boundary: .firstNonFlushable, data: Array(Self.pdu[..<cut]))) == nil)
            let frame = reassembler.add(ACLPacket(handle: 0x40, boundary: .continuing, data: Array(Self.pdu[cut...])))
            #expect(frame == L2CAPFrame(channel: L2CAPFrame.att, payload: PacketBytes.hex("02 F7 00")), "cut at \(cut)")
            #expect(reassembler.pendingHandles == 0)
            #expect(reassembler.dropped == 0)
        }
    }

    @Test func linksAreKeptApart() {
        var reassembler = ACLReassembler()
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .firstFlushable, data: Array(Self.pdu[..<3]))) == nil)
        #expect(reassembler.add(ACLPacket(handle: 2, boundary: .firstFlushable, data: Array(Self.pdu[..<5]))) == nil)
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .continuing, data: Array(Self.pdu[3...])))?.channel == L2CAPFrame.att)
        #expect(reassembler.pendingHandles == 1)
        reassembler.forget(handle: 2)
        #expect(reassembler.pendingHandles == 0)
    }

    @Test func whatCannotBeUsedIsDroppedAndCounted() {
        var reassembler = ACLReassembler()
        // A continuation with nothing to continue.
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .continuing, data: Self.pdu)) == nil)
        #expect(reassembler.dropped == 1)
        // A new start abandons the unfinished PDU, and still completes on its own.
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .firstNonFlushable, data: Array(Self.pdu[..<4]))) == nil)
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .firstNonFlushable, data: Self.pdu)) != nil)
        #expect(reassembler.dropped == 2)
        // Longer than its header says.
        #expect(reassembler.add(ACLPacket(handle: 1, boundary: .complete, data: Self.pdu + [0x00])) == nil)
        #expect(reassembler.dropped == 3)
        #expect(reassembler.pendingHandles == 0)
    }
}
