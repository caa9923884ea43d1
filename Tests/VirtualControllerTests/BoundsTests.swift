import BLEProtocol
import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController
import TestKit

/// What a controller holds for a host that does not read is bounded, and what a host that writes
/// without credits or sense gets is what a controller gives, never a crash or unbounded growth.
@Suite struct BoundsTests {
    static let streamer = BLEAddress(string: "C2:B0:B0:00:00:0F/random")!

    /// Connects by hand and turns the stream's notifications on, then stops reading.
    @Test func aHostThatStopsReadingHoldsThePeripheralBackWithinTheQueueLimits() async throws {
        let clock = ManualClock()
        var configuration = ControllerConfiguration()
        configuration.hostQueueSoftLimit = 4 * 1024
        let peripheral = StreamingPeripheral(address: Self.streamer, count: 20_000)
        let controller = VirtualController(peripherals: [peripheral], clock: clock, configuration: configuration)
        let host = RawHost(controller)
        let received = try await withSerialExecutor { () async throws -> Int in
            try await host.initialise()
            _ = try await host.status(.leCreateConnection(peer: Self.streamer, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .zero)
            _ = try await host.drain()
            let handle = try #require(controller.connectionHandles.first)
            // Write Request to the stream's CCCD (value handle + 1): 01 00.
            let cccd = peripheral.valueHandle + 1
            let write = L2CAPFrame(channel: L2CAPFrame.att, payload: ATTPDU.writeRequest(handle: cccd, value: [0x01, 0x00]).encoded)
            try await host.write(HCIPacket.acl(ACLPacket(handle: handle, boundary: .firstNonFlushable, data: write.encoded)).h4Bytes)
            // The host reads nothing now: what waits for it stays under the soft limit plus one
            // frame's fragments, and the rest is still the peripheral's to send.
            #expect(controller.pendingBytes < configuration.hostQueueSoftLimit + 512)
            let sent = controller.peripheral(Self.streamer, as: StreamingPeripheral.self)?.sent ?? 0
            #expect(sent < 1_000, "the peripheral is held back (\(sent) sent)")
            // Reading drains the queue and lets the peripheral go on, in order, without loss.
            var notifications = 0
            var reassembler = ACLReassembler()
            var expected: UInt32 = 0
            while notifications < 20_000 {
                for packet in try await host.drain() {
                    guard case .acl(let acl) = packet, let frame = reassembler.add(acl),
                          case .handleValueNotification(_, let value)? = try? ATTPDU(parsing: frame.payload) else { continue }
                    let number = UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
                    #expect(number == expected)
                    expected += 1
                    notifications += 1
                }
                #expect(controller.pendingBytes < configuration.hostQueueSoftLimit + 512)
                if controller.pendingBytes == 0 { break }
            }
            return notifications
        }
        #expect(received == 20_000)
        #expect(controller.counters.droppedFrames == 0)
    }

    @Test func aHostThatIgnoresItsCreditsOverflowsTheBuffersAndIsTold() async throws {
        let clock = ManualClock()
        var configuration = ControllerConfiguration()
        configuration.leBufferCount = 2
        configuration.airDelay = .milliseconds(10)
        let controller = VirtualController(peripherals: [StreamingPeripheral(address: Self.streamer, count: 0)], clock: clock,
                                           configuration: configuration)
        let host = RawHost(controller)
        let overflows = try await withSerialExecutor { () async throws -> [HCIEventPacket] in
            try await host.initialise()
            _ = try await host.status(.leCreateConnection(peer: Self.streamer, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .zero)
            _ = try await host.drain()
            let handle = try #require(controller.connectionHandles.first)
            let fragment = HCIPacket.acl(ACLPacket(handle: handle, boundary: .firstNonFlushable, data: [0x01, 0x00, 0x04, 0x00, 0x1E])).h4Bytes
            for _ in 0..<4 { try await host.write(fragment) }
            let overflows = try await host.events().filter { $0.code == 0x1A }
            // Their connection event passes: two buffers come back.
            await advance(clock, to: .milliseconds(10))
            let completed = try await host.events().filter { $0.code == 0x13 }
            #expect(completed == [HCIEventPacket(code: 0x13, parameters: [1, UInt8(handle & 0xFF), UInt8(handle >> 8), 2, 0])])
            // An over-long packet (the buffers hold 27 bytes) is dropped.
            try await host.write(HCIPacket.acl(ACLPacket(handle: handle, boundary: .firstNonFlushable, data: [UInt8](repeating: 0, count: 28))).h4Bytes)
            return overflows
        }
        #expect(overflows == [HCIEventPacket(code: 0x1A, parameters: [0x01]), HCIEventPacket(code: 0x1A, parameters: [0x01])])
        #expect(controller.counters.bufferOverflows == 2)
        #expect(controller.counters.mostBuffersInUse == 2)
        #expect(controller.counters.droppedHostPackets == 3)
    }

    @Test func aHostThatWritesCommandsAndNeverReadsMeetsTheHardLimit() async throws {
        var configuration = ControllerConfiguration()
        configuration.hostQueueHardLimit = 64 * 1024
        let controller = VirtualController(peripherals: [], clock: ManualClock(), configuration: configuration)
        let read = HCIPacket.command(.readLocalVersionInformation).h4Bytes
        for _ in 0..<20_000 { try await controller.write(read) }
        #expect(controller.pendingBytes <= configuration.hostQueueHardLimit + 64)
        #expect(controller.counters.droppedEvents > 0)
    }

    @Test func randomBytesNeverCrashTheControllerAndResetStillWorks() async throws {
        let controller = VirtualController(peripherals: [MirrorPeripheral()], clock: ManualClock())
        let host = RawHost(controller)
        var generator = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let length = Int(generator.next() % 64)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Mostly well-framed commands with random opcodes and parameters, some pure noise.
            if generator.next() % 4 != 0, bytes.count >= 3 {
                bytes = [0x01] + bytes.prefix(2) + [UInt8(bytes.count - 2)] + bytes.dropFirst(2)
            }
            try await controller.write(bytes)
            _ = try await host.drain()
        }
        // Noise may have left a packet half read (an ACL header can claim 8 KiB): bytes that finish
        // it, then a byte that is no packet type, bring the framer back, as a host's recovery does.
        try await controller.write([UInt8](repeating: 0x00, count: 8_300))
        _ = try await host.drain()
        #expect(try await host.send(.reset) == [.commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0x00])])
        #expect(controller.counters.hardwareErrors > 0)
    }
}

