import BLEProtocol
import TestKit
import HAL
import Testing
@testable import Transports

/// The swift-nio way: one byte stream, cut every way we can think of, must always give the same packets.
@Suite struct H4FramerTests {
    /// Command, event, ACL, SCO, ISO (with the reserved length bits set), and an LE Meta event.
    static let packets: [[UInt8]] = [
        PacketBytes.hex("01 03 0C 00"),
        PacketBytes.hex("04 0E 04 01 03 0C 00"),
        PacketBytes.hex("02 40 20 07 00 03 00 04 00 02 F7 00"),
        PacketBytes.hex("03 01 00 03 AA BB CC"),
        PacketBytes.hex("05 60 00 03 40 11 22 33"),
        PacketBytes.hex("04 13 05 01 40 00 01 00"),
        PacketBytes.hex("04 3E 0C 02 01 00 00 11 22 33 44 55 66 00 C4"),
        PacketBytes.hex("02 41 10 00 00"),
    ]
    static let stream = packets.flatMap { $0 }

    static let expected: [HCIPacket] = [
        .command(HCICommand(opcode: 0x0C03, parameters: [])),
        .event(HCIEventPacket(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])),
        .acl(ACLPacket(handle: 0x0040, boundary: .firstFlushable, data: PacketBytes.hex("03 00 04 00 02 F7 00"))),
        .other(type: 0x03, payload: PacketBytes.hex("01 00 03 AA BB CC")),
        .other(type: 0x05, payload: PacketBytes.hex("60 00 03 40 11 22 33")),
        .event(HCIEventPacket(code: 0x13, parameters: PacketBytes.hex("01 40 00 01 00"))),
        .event(HCIEventPacket(code: 0x3E, parameters: PacketBytes.hex("02 01 00 00 11 22 33 44 55 66 00 C4"))),
        .acl(ACLPacket(handle: 0x0041, boundary: .continuing, data: [])),
    ]

    /// Feeds `bytes` cut at `cuts`; stops at the first error, then asks once more so an error
    /// deferred behind good packets surfaces too.
    static func decode(_ bytes: [UInt8], cuts: [Int]) -> (packets: [HCIPacket], error: H4Error?, buffered: Int) {
        var framer = H4Framer()
        var packets: [HCIPacket] = []
        var start = 0
        do {
            for end in cuts.sorted() + [bytes.count] where end >= start {
                packets += try framer.feed(bytes[start..<end])
                start = end
            }
            packets += try framer.feed([UInt8]())
        } catch {
            return (packets, error, framer.bufferedByteCount)
        }
        return (packets, nil, framer.bufferedByteCount)
    }

    /// Every way of cutting the stream this suite tries: whole, byte by byte, every two-way
    /// split, every three-way split around packet boundaries, and 300 seeded random splits.
    static func allCuts(for count: Int) -> [[Int]] {
        var cuts: [[Int]] = [[], Array(1..<count)]
        cuts += (0...count).map { [$0] }
        for a in stride(from: 0, through: count, by: 3) {
            for b in stride(from: a, through: count, by: 5) { cuts.append([a, b]) }
        }
        var rng = SplitMix64(seed: 0x4834)
        for _ in 0..<300 {
            let pieces = Int.random(in: 1...12, using: &rng)
            cuts.append((0..<pieces).map { _ in Int.random(in: 0...count, using: &rng) })
        }
        return cuts
    }

    @Test func everySplitYieldsTheSamePackets() {
        for cuts in Self.allCuts(for: Self.stream.count) {
            let result = Self.decode(Self.stream, cuts: cuts)
            #expect(result.packets == Self.expected, "cuts \(cuts)")
            #expect(result.error == nil)
            #expect(result.buffered == 0)
        }
    }

    @Test func packetsReEncodeToTheStream() {
        #expect(Self.expected.flatMap(\.h4Bytes) == Self.stream)
    }

    @Test func aGarbageTypeByteThrowsAfterTheGoodPacketsInEverySplit() {
        let good = Array(Self.stream[..<Self.packets[0..<3].map(\.count).reduce(0, +)])
        let bytes = good + [0x7F] + Self.stream
        for cuts in Self.allCuts(for: bytes.count) {
            let result = Self.decode(bytes, cuts: cuts)
            #expect(result.packets == Array(Self.expected[0..<3]), "cuts \(cuts)")
            #expect(result.error == .unknownPacketType(0x7F), "cuts \(cuts)")
        }
    }

    @Test func aGarbageByteAloneThrowsAtOnce() {
        var framer = H4Framer()
        #expect(throws: H4Error.unknownPacketType(0x00)) { try framer.feed([0x00, 0x01, 0x02]) }
        // Once out of sync it stays so, without buffering more, until reset.
        #expect(throws: H4Error.unknownPacketType(0x00)) { try framer.feed(Self.stream) }
        #expect(framer.bufferedByteCount == 3)
        framer.reset()
        #expect(framer.bufferedByteCount == 0)
        #expect((try? framer.feed(Self.stream)) == Self.expected)
    }

    @Test func goodPacketsBeforeGarbageInOneCallAreNotLost() throws {
        var framer = H4Framer()
        let packets = try framer.feed(Self.packets[1] + [0xFF])
        #expect(packets == [Self.expected[1]])
        #expect(throws: H4Error.unknownPacketType(0xFF)) { try framer.feed([UInt8]()) }
    }

    @Test func anImpossibleLengthIsOversized() {
        var framer = H4Framer()
        #expect(throws: H4Error.oversized(type: 0x02, length: 0xFFFF)) { try framer.feed(PacketBytes.hex("02 40 00 FF FF")) }
        var small = H4Framer(maximumPayloadLength: 300)
        #expect(throws: H4Error.oversized(type: 0x05, length: 0x3FFF)) { try small.feed(PacketBytes.hex("05 01 00 FF FF")) }
    }

    @Test func aTruncatedTailStaysBuffered() throws {
        var framer = H4Framer()
        let partial = PacketBytes.hex("02 40 20 07 00 03")
        let packets = try framer.feed(Self.packets[0] + Self.packets[1] + partial)
        #expect(packets == Array(Self.expected[0..<2]))
        #expect(framer.bufferedByteCount == partial.count)
        let rest = try framer.feed(PacketBytes.hex("00 04 00 02 F7 00"))
        #expect(rest == [Self.expected[2]])
        #expect(framer.bufferedByteCount == 0)
        // A lone header byte waits too.
        #expect(try framer.feed([0x04]).isEmpty)
        #expect(framer.bufferedByteCount == 1)
    }

    @Test func errorsSayWhatToDo() {
        #expect(H4Error.unknownPacketType(0x7F).description.contains("0x7F"))
        #expect(H4Error.unknownPacketType(0x7F).description.contains("reset the controller"))
        #expect(H4Error.oversized(type: 2, length: 40000).description.contains("40000"))
    }

    @Test func aclHeaderRoundTrips() throws {
        let packet = ACLPacket(handle: 0x0EFF, boundary: .firstNonFlushable, broadcast: 1, data: [1, 2, 3])
        #expect(packet.encoded == PacketBytes.hex("FF 4E 03 00 01 02 03"))
        #expect(try ACLPacket(parsing: packet.encoded) == packet)
        #expect(throws: HCIParseError.self) { try ACLPacket(parsing: PacketBytes.hex("FF 4E 04 00 01 02 03")) }
        #expect(HCIPacket.acl(packet).h4Bytes == [0x02] + packet.encoded)
    }
}
