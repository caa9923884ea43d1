import Foundation
import Glibc
import LinuxIO
import Testing
@testable import Transports

/// The shared reading/writing machinery, on a socketpair whose far end the test controls.
@Suite(.timeLimit(.minutes(1))) struct DescriptorLinkTests {
    static func pair(stall: Duration = .seconds(30), budget: Int = 256 * 1024) throws -> (link: DescriptorLink, peer: Int32, stall: Duration) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw LinkPeer.SystemCallFailed("socketpair")
        }
        let link = DescriptorLink(fd: FileDescriptor(rawValue: fds[0]), description: "test", behaviour: LinkBehaviour(
            zeroReadIsEndOfFile: true, endOfFile: .closedByPeer("test"),
            readError: { .io("read \($0)") }, writeError: { .io("write \($0)") },
            send: { fd, bytes throws(Errno) in try fd.send(from: bytes) },
            writeStallLimit: stall, receiveBudget: budget))
        return (link, fds[1], stall)
    }

    /// Issue 26: a read that finds nothing after one that brought bytes goes back to poll.
    @Test func aQuietLinkAfterTrafficCostsNoCPU() async throws {
        let (link, peer, _) = try Self.pair()
        defer { close(peer) }
        let share = try await QuietLink.readerShare(of: link, farEnd: peer)
        #expect(share < QuietLink.bound, "the reading thread used \(share) of a core while the link was quiet")
        await link.close()
    }

    /// Without a timeout in poll, close() must still wake the reading thread at once.
    @Test func closeWakesAReaderBlockedInPollAtOnce() async throws {
        let (link, peer, _) = try Self.pair()
        defer { close(peer) }
        var chunks = link.incoming().makeAsyncIterator()
        try LinkPeer.write(peer, [1, 2, 3])
        // Once the bytes are here the reader has found the socket empty and waits in poll.
        #expect(try await chunks.next() == [1, 2, 3])
        let clock = ContinuousClock()
        let took = await clock.measure { await link.close() }
        #expect(try await chunks.next() == nil, "a local close ends the stream without an error")
        #expect(took < .seconds(1))
        #expect(LinkPeer.seesEndOfFile(peer), "the descriptor is closed once close() returns")
    }

    @Test func aWriteTheFarEndNeverReadsFailsAtItsDeadlineInsteadOfHanging() async throws {
        let (link, peer, stall) = try Self.pair(stall: .milliseconds(300))
        defer { close(peer) }
        let big = [UInt8](repeating: 0xAA, count: 16 << 20) // far more than a socket buffer holds
        await #expect(throws: HCILinkError.writeStalled("test", seconds: stall.inSeconds)) { try await link.send(big) }
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

    /// A peer that floods (issue 14: a tcp: controller sending 1 GB of advertising reports in 5 s
    /// took hwprobe to 1.1 GB): while nobody takes the bytes, the reading thread stops at its
    /// budget, so the far end's writes block on the kernel's buffers instead of filling our memory.
    @Test func aFloodWhileNobodyReadsStopsAtTheBudget() async throws {
        let budget = 256 * 1024
        let (link, peer, _) = try Self.pair(budget: budget)
        defer { close(peer) }
        let chunk = [UInt8](repeating: 0x3E, count: 64 * 1024)
        var accepted = 0
        let cap = 64 << 20
        // Write until the far end has made no progress for a while (poll with a deadline), or
        // the cap: without back-pressure the reading thread drains everything and the cap is hit.
        while accepted < cap {
            let n = chunk.withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                accepted += n
                continue
            }
            guard errno == EAGAIN else { break }
            if !LinkPeer.wait(peer, for: Int32(POLLOUT), until: .now + .milliseconds(300)) { break }
        }
        #expect(accepted < 16 << 20, "\(accepted) bytes taken while nobody read them")
        // What was taken is all there, in order, once the consumer reads.
        let incoming = link.incoming()
        var received = 0
        for try await piece in incoming {
            received += piece.count
            if received >= accepted { break }
        }
        #expect(received == accepted)
        await link.close()
    }
}
