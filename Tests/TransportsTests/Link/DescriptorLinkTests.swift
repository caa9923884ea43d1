import Foundation
import Glibc
import Testing
@testable import Transports

/// The shared reading/writing machinery, on a socketpair whose far end the test controls.
@Suite(.timeLimit(.minutes(1))) struct DescriptorLinkTests {
    static func pair(stall: Duration = .seconds(30)) throws -> (link: DescriptorLink, peer: Int32, stall: Duration) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw LinkPeer.SystemCallFailed("socketpair")
        }
        let link = DescriptorLink(fd: fds[0], description: "test", behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: true, endOfFile: .closedByPeer("test"),
            readError: { .io("read \($0)") }, writeError: { .io("write \($0)") },
            send: { fd, bytes, count in Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL)) },
            writeStallLimit: stall))
        return (link, fds[1], stall)
    }

    @Test func aWriteTheFarEndNeverReadsFailsAtItsDeadlineInsteadOfHanging() async throws {
        let (link, peer, stall) = try Self.pair(stall: .milliseconds(300))
        defer { close(peer) }
        let big = [UInt8](repeating: 0xAA, count: 16 << 20) // far more than a socket buffer holds
        await #expect(throws: HCILinkError.writeStalled("test", seconds: stall.linkSeconds)) { try await link.send(big) }
        #expect(HCILinkError.writeStalled("uart:/dev/ttyACM0", seconds: 5).description.contains("check the RTS/CTS wiring"))
        await link.close()
    }

    @Test func closeDuringAStalledWriteEndsItWithClosed() async throws {
        let (link, peer, _) = try Self.pair()
        defer { close(peer) }
        let writer = Task { () -> HCILinkError? in
            do throws(HCILinkError) {
                try await link.send([UInt8](repeating: 0x55, count: 16 << 20))
                return nil
            } catch { return error }
        }
        // Wait (by poll, with a deadline) until the peer sees the writer's bytes: it is then inside the write.
        #expect(LinkPeer.wait(peer, for: Int32(POLLIN), until: .now + LinkPeer.deadline))
        await link.close()
        #expect(await writer.value == .closed("test"))
    }

    @Test func chunksArriveInOrderAcrossManyWrites() async throws {
        let (link, peer, _) = try Self.pair()
        defer { close(peer) }
        var expected: [UInt8] = []
        for round in 0..<200 {
            let chunk = (0..<(round % 17 + 1)).map { UInt8(truncatingIfNeeded: $0 + round) }
            expected += chunk
            try LinkPeer.write(peer, chunk)
        }
        #expect(try await LinkIncoming.collect(link.incoming(), count: expected.count) == expected)
        await link.close()
    }
}
