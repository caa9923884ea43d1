import BLEProtocol
import HAL
import HALFakes
import Synchronization
import Testing
@_spi(Fuzzing) @testable import Transports

/// The host stack's defects found by reading and by hostile peers (issue 14), each pinned by a
/// test against a scripted controller on the manual clock.
@Suite(.timeLimit(.minutes(1)))
struct HostDefectTests {
    static let peer = BLEAddress(string: "C0:FF:EE:00:4F:2A/random")!

    struct Bench {
        let clock = ManualClock()
        let controller: ScriptedController
        let host: HCIHost

        init(controller: ScriptedController = ScriptedController()) async throws {
            self.controller = controller
            host = HCIHost(stream: controller, clock: clock)
            try await host.start()
        }

        /// Connects to `peer`, the controller completing with `handle`.
        func connect(handle: UInt16, peer: BLEAddress = HostDefectTests.peer) async throws -> BLEConnection {
            let host = host
            let before = controller.commands.filter { $0.opcode == 0x200D }.count
            let attempt = Task { try await host.connect(to: peer) }
            await controller.waitForCommand(0x200D, count: before + 1)
            controller.inject(ScriptedController.connectionComplete(handle: handle, peer: peer))
            return try await attempt.value
        }
    }

    /// Lets every task that is ready run (no time passes).
    static func settle() async {
        for _ in 0..<2000 { await Task.yield() }
    }

    // MARK: 1. a disconnect's timer outliving its link

    @Test func aReconnectWithinTwoSecondsIsNotClosedByTheOldDisconnect() async throws {
        let bench = try await Bench()
        let first = try await bench.connect(handle: 0x0040)
        let leaving = Task { await first.disconnect() }
        await bench.controller.waitForCommand(0x0406)
        bench.controller.inject(ScriptedController.disconnectionComplete(handle: 0x0040, reason: 0x16))
        await leaving.value
        #expect(first.disconnectReason == .localHostTerminated)
        // Controllers reuse handles: the retry gets 0x0040 again.
        let second = try await bench.connect(handle: 0x0040)
        await Self.settle()
        bench.clock.advance(by: .seconds(3))
        await Self.settle()
        #expect(second.disconnectReason == nil, "the new link was closed by the old link's timer")
        #expect(bench.controller.commands.filter { $0.opcode == 0x0406 }.count == 1)
    }

    // MARK: 2. a replaced scan switching scanning off

    @Test func aReplacedScanSendsNothingWhenItEnds() async throws {
        let bench = try await Bench()
        let first = try await bench.host.scan()
        let second = try await bench.host.scan()
        await Self.settle()
        _ = first
        let enables = bench.controller.commands.filter { $0.opcode == 0x200C }.map { $0.parameters.first ?? 0xFF }
        // On, off (the replacement), on: nothing after the second scan's "on", and one "off" only.
        #expect(enables == [1, 0, 1], "scan enables sent: \(enables)")
        withExtendedLifetime(second) {}
    }

    // MARK: 3. cancellation reaching the stack

    @Test func aCancelledCommandReturnsAtOnce() async throws {
        let bench = try await Bench()
        bench.controller.hold(0x1001)  // Read Local Version: never answered
        let host = bench.host
        let waiting = Task { try await host.send(.readLocalVersionInformation) }
        await bench.controller.waitForCommand(0x1001, count: 2)
        waiting.cancel()
        await #expect(throws: BLEError.self) { try await waiting.value }
    }

    @Test func aCancelledConnectReturnsAtOnceAndCancelsTheAttempt() async throws {
        let bench = try await Bench()
        let host = bench.host
        let attempt = Task { try await host.connect(to: Self.peer) }
        await bench.controller.waitForCommand(0x200D)
        attempt.cancel()
        await #expect(throws: BLEError.self) { try await attempt.value }
        await bench.controller.waitForCommand(0x200E)  // LE Create Connection Cancel
    }

    @Test func aCancelledATTRequestReturnsAtOnceAndTheBearerServesTheNextOne() async throws {
        let bench = try await Bench()
        let link = try await bench.connect(handle: 0x0041)
        let gatt = link.gatt
        let reading = Task { try await gatt.read(0x0003) }
        await bench.controller.waitUntil { _, acl in l2capPayloads(acl, handle: 0x0041, channel: 4).count >= 1 }
        reading.cancel()
        await #expect(throws: BLEError.self) { try await reading.value }
        // The next request waits for the answer to the abandoned one (one outstanding at a time)…
        let next = Task { try await gatt.read(0x0005) }
        await Self.settle()
        #expect(l2capPayloads(bench.controller.aclPackets, handle: 0x0041, channel: 4).count == 1)
        // …which comes late and is dropped; then the next goes out and is answered.
        bench.controller.inject(ScriptedController.att(handle: 0x0041, [0x0B, 0xAA]))
        await bench.controller.waitUntil { _, acl in l2capPayloads(acl, handle: 0x0041, channel: 4).count >= 2 }
        #expect(l2capPayloads(bench.controller.aclPackets, handle: 0x0041, channel: 4).last == [0x0A, 0x05, 0x00])
        bench.controller.inject(ScriptedController.att(handle: 0x0041, [0x0B, 0x01, 0x02]))
        #expect(try await next.value == [0x01, 0x02])
    }

    /// Found while rebuilding the host: a controller that answers LE Create Connection with its
    /// Command Status and the Connection Complete in one breath (a virtual controller, a
    /// peripheral already advertising) had the completion handled before the attempt waited for
    /// it, and the new link was dropped as one nobody asked for.
    @Test func aConnectionCompleteRightBehindItsCommandStatusIsNotLost() async throws {
        let bench = try await Bench()
        bench.controller.hold(0x200D)
        let host = bench.host
        let attempt = Task { try await host.connect(to: Self.peer) }
        await bench.controller.waitForCommand(0x200D)
        bench.controller.inject(ScriptedController.commandStatus(0x200D)
                                + ScriptedController.connectionComplete(handle: 0x0045, peer: Self.peer))
        let link = try await attempt.value
        #expect(link.handle == 0x0045)
        await Self.settle()
        #expect(!bench.controller.commands.contains { $0.opcode == 0x0406 }, "the link was not dropped")
    }

    // MARK: 5. discovery answers that overlap

    @Test func overlappingServicesEndDiscoveryWithAProtocolError() async throws {
        // 0x0001–0x0010, then a "next" service starting inside it: the client used to collect
        // overlapping and repeated services for as long as the peer kept answering.
        let answers: [[UInt8]] = [
            [0x11, 0x06, 0x01, 0x00, 0x10, 0x00, 0x0D, 0x18],
            [0x11, 0x06, 0x05, 0x00, 0x20, 0x00, 0x0F, 0x18],
        ]
        let peer = ScriptedGATTPeer(answers: answers)
        await #expect(throws: BLEError.self) { try await peer.client.primaryServices() }
        #expect(peer.requests <= 2)
        let repeated = ScriptedGATTPeer(answers: [[0x11, 0x06, 0x01, 0x00, 0x10, 0x00, 0x0D, 0x18]])
        // A peer repeating the same service: without the rule, discovery moves on to 0x0011 and
        // collects it again and again until the handle space runs out.
        await #expect(throws: BLEError.self) { try await repeated.client.primaryServices() }
        #expect(repeated.requests <= 2)
    }

    // MARK: 6. connection parameters out of range

    @Test func aParameterUpdateOutOfRangeIsRejected() async throws {
        let bench = try await Bench()
        _ = try await bench.connect(handle: 0x0042)
        // Interval min 2 (2.5 ms) is below the 7.5 ms floor: L2CAP Connection Parameter Update Request.
        let request = LESignalingPacket.connectionParameterUpdateRequest(identifier: 7, minInterval: 2, maxInterval: 4,
                                                                         latency: 0, timeout: 100)
        bench.controller.inject(ScriptedController.l2cap(handle: 0x0042, channel: 5, request.encoded))
        await bench.controller.waitUntil { _, acl in !l2capPayloads(acl, handle: 0x0042, channel: 5).isEmpty }
        let response = try LESignalingPacket(parsing: l2capPayloads(bench.controller.aclPackets, handle: 0x0042, channel: 5)[0])
        #expect(response == .connectionParameterUpdateResponse(identifier: 7, result: 1))
        await Self.settle()
        #expect(!bench.controller.commands.contains { $0.opcode == 0x2013 }, "no LE Connection Update for refused values")
    }

    @Test func aRemoteParameterRequestOutOfRangeGetsANegativeReply() async throws {
        let bench = try await Bench()
        _ = try await bench.connect(handle: 0x0043)
        // Supervision timeout 10 (100 ms) shorter than (1 + latency) × interval × 2 allows.
        bench.controller.inject(ScriptedController.remoteParameterRequest(handle: 0x0043, min: 400, max: 800, latency: 4, timeout: 10))
        await bench.controller.waitUntil { commands, _ in commands.contains { $0.opcode == 0x2021 || $0.opcode == 0x2020 } }
        let answer = try #require(bench.controller.commands.last { $0.opcode == 0x2021 || $0.opcode == 0x2020 })
        #expect(answer.opcode == 0x2021, "LE Remote Connection Parameter Request Negative Reply")
        #expect(answer.parameters == [0x43, 0x00, 0x3B], "reason 0x3B Unacceptable Connection Parameters")
        // Values inside the ranges are accepted as before.
        bench.controller.inject(ScriptedController.remoteParameterRequest(handle: 0x0043, min: 24, max: 40, latency: 0, timeout: 500))
        await bench.controller.waitForCommand(0x2020)
    }

    // MARK: 7. ATT PDUs longer than the MTU

    @Test func aNotificationLongerThanTheMTUIsDropped() async throws {
        let bench = try await Bench()
        let link = try await bench.connect(handle: 0x0044)
        var values = link.bearer.values(of: 0x0010).makeAsyncIterator()
        // No MTU exchange: the ATT_MTU is 23, so a notification carries at most 20 value bytes.
        bench.controller.inject(ScriptedController.att(handle: 0x0044, [0x1B, 0x10, 0x00] + Array(repeating: 0xEE, count: 200)))
        bench.controller.inject(ScriptedController.att(handle: 0x0044, [0x1B, 0x10, 0x00, 0x01, 0x02]))
        #expect(await values.next() == [0x01, 0x02], "the oversized one was not delivered")
        #expect(link.bearer.malformedPDUs == 1)
    }

    // MARK: 9. a new link with impossible parameters (issue 27, item 18)

    @Test func aLinkWithImpossibleParametersIsEndedAndTheConnectFails() async throws {
        let bench = try await Bench()
        let host = bench.host
        let attempt = Task { () -> BLEError? in
            do throws(BLEError) { _ = try await host.connect(to: Self.peer) } catch { return error }
            return nil
        }
        await bench.controller.waitForCommand(0x200D)
        bench.controller.inject(ScriptedController.connectionComplete(handle: 0x0045, peer: Self.peer, interval: 0xFFFF, latency: 0xFFFF, timeout: 0xFFFF))
        let error = await attempt.value
        guard case .connectionFailed(_, let status)? = error else {
            Issue.record("the connect did not fail: \(String(describing: error))")
            return
        }
        #expect(status == 0x3B)
        await bench.controller.waitForCommand(0x0406)
        let disconnect = bench.controller.commands.last { $0.opcode == 0x0406 }
        #expect(disconnect?.parameters == LittleEndian.u16(0x0045) + [0x3B], "ended with Unacceptable Connection Parameters")
    }

    // MARK: 8. a controller that stops granting command credits while opening (issue 27, item 15)

    @Test func openingAControllerHasOneOverallDeadline() async throws {
        let clock = ManualClock()
        let controller = ScriptedController(credits: 0)
        let host = HCIHost(stream: controller, clock: clock)
        let opening = Task { () -> BLEError? in
            do throws(BLEError) { try await host.start() } catch { return error }
            return nil
        }
        await controller.waitForCommand(0x0C03)  // Reset, answered with no credits
        // Each question after Reset has its own 5 s deadline; six of them used to add up to 30 s.
        for _ in 0..<2 {
            await Self.settle()
            clock.advance(by: .seconds(5))
        }
        await Self.settle()
        let result = await opening.value
        guard case .controllerStartTimedOut(let limit, _, let noCredits)? = result else {
            Issue.record("opening did not end at the overall deadline: \(String(describing: result))")
            return
        }
        #expect(limit == .seconds(10))
        #expect(noCredits)
        #expect("\(BLEError.controllerStartTimedOut(limit, waitingFor: "Read Local Version Information", noCredits: true))"
            .contains("stopped granting command credits"))
        await host.close()
    }
}

extension ScriptedGATTPeer {
    /// A peer answering with `answers` in turn (the last repeated).
    convenience init(answers: [[UInt8]]) {
        self.init(input: [0] + answers.flatMap { [UInt8($0.count)] + $0 })
    }
}
