import Foundation
import Glibc
import HAL
import Testing
@testable import Transports

@Suite(.timeLimit(.minutes(1))) struct TCPHCIStreamTests {
    /// Issue 26: after traffic, a quiet `tcp:` link must leave its reading thread blocked.
    @Test func aQuietLinkAfterTrafficCostsNoCPU() async throws {
        let (listener, port) = try LinkPeer.listener()
        defer { close(listener) }
        let stream = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
        let peer = try LinkPeer.accept(listener)
        defer { close(peer) }
        let share = try await QuietLink.readerShare(of: stream.link, farEnd: peer)
        #expect(share < QuietLink.bound, "the reading thread used \(share) of a core while the link was quiet")
        await stream.close()
    }

    @Test func bytesFlowBothWaysWithNagleOff() async throws {
        let (listener, port) = try LinkPeer.listener()
        defer { close(listener) }
        let stream = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
        let peer = try LinkPeer.accept(listener)
        defer { close(peer) }
        #expect(stream.description == "tcp:127.0.0.1:\(port)")
        var noDelay: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(try #require(stream.link.rawDescriptor), Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &size) == 0)
        #expect(noDelay == 1)

        let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
        try await stream.write(reset)
        #expect(try LinkPeer.read(peer, count: reset.count) == reset)

        let fromController = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try LinkPeer.write(peer, fromController)
        #expect(try await LinkIncoming.collect(stream.incoming(), count: fromController.count) == fromController)
        await stream.close()
    }

    @Test func peerCloseEndsIncomingWithClosedByPeer() async throws {
        let (listener, port) = try LinkPeer.listener()
        defer { close(listener) }
        let stream = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
        let peer = try LinkPeer.accept(listener)
        try LinkPeer.write(peer, [0x04, 0x0E])
        close(peer)

        let (bytes, error) = await LinkIncoming.drain(stream.incoming())
        #expect(bytes == [0x04, 0x0E], "bytes sent before the close still arrive")
        #expect(error as? HCILinkError == .closedByPeer("tcp:127.0.0.1:\(port)"))
        #expect("\(error.map { "\($0)" } ?? "")" == "tcp:127.0.0.1:\(port) closed the connection")
        await #expect(throws: HCILinkError.closedByPeer("tcp:127.0.0.1:\(port)")) { try await stream.write([0x01]) }
        await stream.close()
    }

    @Test func connectionRefusedSaysToStartTheController() async throws {
        let port = try LinkPeer.closedPort()
        do {
            _ = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error == .connectionRefused(host: "127.0.0.1", port: port))
            #expect(error.description == "nothing listens on 127.0.0.1:\(port): start the virtual controller first")
        }
    }

    @Test func unknownHostIsReportedAsSuch() async {
        await #expect {
            _ = try await TCPHCIStream.connect(host: "no-such-host.invalid", port: 9101)
        } throws: { error in
            guard case .hostNotFound(let host, _) = error as? HCILinkError else { return false }
            return host == "no-such-host.invalid" && "\(error)".hasPrefix("cannot find host 'no-such-host.invalid'")
        }
    }

    @Test func closeWhileAReadIsBlockedReturnsPromptlyAndEndsTheStream() async throws {
        let (listener, port) = try LinkPeer.listener()
        defer { close(listener) }
        let stream = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
        let peer = try LinkPeer.accept(listener)
        defer { close(peer) }
        let reader = Task { await LinkIncoming.drain(stream.incoming()) }

        let clock = ContinuousClock()
        let took = await clock.measure { await stream.close() }
        let (bytes, error) = await reader.value
        #expect(took < .seconds(1))
        #expect(bytes.isEmpty)
        #expect(error == nil, "a local close ends the stream without an error")
        #expect(LinkPeer.seesEndOfFile(peer), "the socket is really closed once close() returns")
        await stream.close() // idempotent
        await #expect(throws: HCILinkError.closed("tcp:127.0.0.1:\(port)")) { try await stream.write([0x01]) }
    }

    @Test func incomingHasOneConsumer() async throws {
        let (listener, port) = try LinkPeer.listener()
        defer { close(listener) }
        let stream = try await TCPHCIStream.connect(host: "127.0.0.1", port: port)
        let peer = try LinkPeer.accept(listener)
        defer { close(peer) }
        _ = stream.incoming()
        let (_, error) = await LinkIncoming.drain(stream.incoming())
        #expect("\(error.map { "\($0)" } ?? "")".contains("one consumer"))
        await stream.close()
    }

    @Test func ipv6LoopbackThroughTheDeviceURI() async throws {
        let (listener, port) = try LinkPeer.listener(ipv6: true)
        defer { close(listener) }
        let stream = try await HCIStreams.open(try DeviceURI(parsing: "tcp:::1:\(port)"))
        let peer = try LinkPeer.accept(listener)
        defer { close(peer) }
        #expect(stream is TCPHCIStream)
        try await stream.write([0x01, 0x01, 0x10, 0x00])
        #expect(try LinkPeer.read(peer, count: 4) == [0x01, 0x01, 0x10, 0x00])
        await stream.close()
    }

    @Test func nonHCIDeviceURIsAreRefusedClearly() async {
        await #expect(throws: HCILinkError.notAnHCITransport("v4l2:/dev/video0")) {
            _ = try await HCIStreams.open(.v4l2(path: "/dev/video0"))
        }
        #expect(HCILinkError.notAnHCITransport("sim:").description.contains("use hci:N, uart:PATH"))
    }
}
