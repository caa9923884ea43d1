import HAL
import HALFakes
import Testing
@testable import Flows

/// A state's deadline is extended only by real progress (issue 15): a mirror that keeps saying
/// "scanning, 40 %" without ever moving must not hold a scan open for ever.
@Suite struct BodyScanDeadlineTests {
    @Test func aMirrorRepeatingTheSameProgressTimesOut() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(script: MirrorScript(), clock: clock)
        let transport = StuckProgressTransport(base: FakeScaleTransport(peripherals: [.mirror(mirror)], clock: clock), clock: clock)
        let harness = ScanHarness(clock: clock, mirror: mirror, transport: transport, configuration: ScanHarness.configuration { _ in })
        let entered = Locked<Duration?>(nil)
        let outcome = await harness.run(limit: 2_000) { state in
            if state == .scanning { entered.withLock { $0 = $0 ?? clock.now.offset } }
        }
        let ended = try #require(outcome, "the scan was still open after 2000 steps of the clock")
        #expect(ended.failure?.reason == .timedOut)
        #expect(ended.failure?.state == .scanning)
        // From the first (frozen) progress report, one scanning deadline and no more.
        let start = try #require(entered.value)
        #expect(harness.elapsed - start <= BodyScanDeadlines().scanning.failure + .seconds(1),
                "the scan ended \(harness.elapsed - start) after it started scanning")
    }

    @Test func progressGoingBackIsNoProgress() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(script: MirrorScript(), clock: clock)
        let transport = StuckProgressTransport(base: FakeScaleTransport(peripherals: [.mirror(mirror)], clock: clock), clock: clock,
                                               seesaw: true)
        let harness = ScanHarness(clock: clock, mirror: mirror, transport: transport, configuration: ScanHarness.configuration { _ in })
        let ended = try #require(await harness.run(limit: 2_000), "the scan was still open after 2000 steps of the clock")
        #expect(ended.failure?.reason == .timedOut)
        #expect(ended.failure?.state == .scanning)
    }
}

/// The fake mirror, but once it starts scanning every `scanState` it sends (and one every five
/// seconds besides) says "scanning" at the progress of its first report: a mirror that keeps
/// talking and never gets anywhere. With `seesaw`, the progress goes down and up by one.
struct StuckProgressTransport: ScaleTransport {
    let base: FakeScaleTransport
    let clock: ManualClock
    var seesaw = false

    func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> { base.discover() }

    func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
        StuckProgressConnection(base: try await base.connect(to: device), clock: clock, seesaw: seesaw)
    }
}

final class StuckProgressConnection: ScaleConnection {
    let base: any ScaleConnection
    let events: AsyncStream<ScaleEvent>
    private let pump: Task<Void, Never>
    private let heartbeat = Locked<Task<Void, Never>?>(nil)

    init(base: any ScaleConnection, clock: ManualClock, seesaw: Bool) {
        self.base = base
        let (stream, continuation) = AsyncStream.makeStream(of: ScaleEvent.self)
        events = stream
        let frozen = Locked<(progress: UInt8, count: Int)?>(nil)
        let heartbeat = heartbeat
        let report: @Sendable () -> Void = {
            let progress = frozen.withLock { value -> UInt8 in
                value!.count += 1
                return seesaw && value!.count % 2 == 0 ? value!.progress - 1 : value!.progress
            }
            continuation.yield(.scanState(MirrorScanStatus(state: .scanning, progress: progress)))
        }
        pump = Task {
            for await event in base.events {
                guard case .scanState(let status) = event, status.state == .scanning || frozen.value != nil else {
                    continuation.yield(event)
                    continue
                }
                let first = frozen.withLock { value -> Bool in
                    defer { if value == nil { value = (max(status.progress, 1), 0) } }
                    return value == nil
                }
                report()
                if first {
                    heartbeat.withLock { $0 = Task {
                        while (try? await clock.sleep(for: .seconds(5))) != nil { report() }
                    } }
                }
            }
            continuation.finish()
        }
    }

    var device: DiscoveredDevice { base.device }
    func readInfo() async throws(ScaleError) -> MirrorInfo { try await base.readInfo() }
    func send(_ command: MirrorCommand) async throws(ScaleError) { try await base.send(command) }
    func readResult() async throws(ScaleError) -> ScanResult { try await base.readResult() }
    func disconnect() async {
        heartbeat.withLock { $0?.cancel() }
        await base.disconnect()
    }
}
