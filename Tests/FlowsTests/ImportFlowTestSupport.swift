import TestKit
import Dispatch
@testable import Flows
import HAL
import HALFakes
import Synchronization

/// Helpers for the import and decrypt flow tests, kept in one namespace so they never collide
/// with other suites' helpers in this target.
enum ImportKit {
    /// The interval `FakeCodeSource` waits before each frame in these tests.
    static let frameInterval = Duration.milliseconds(100)

    /// Lets a fake code source deliver `count` frames: each one waits for the source to sleep,
    /// then moves the manual clock past its interval. No wall-clock time passes.
    static func deliverFrames(_ count: Int, on clock: ManualClock) async {
        for _ in 0..<count {
            await clock.waitForSleepers(1)
            clock.advance(by: frameInterval)
        }
    }

    static func source(_ texts: [String], clock: ManualClock, endError: CameraError? = nil) -> FakeCodeSource {
        FakeCodeSource(texts: texts, interval: frameInterval, clock: clock, endError: endError)
    }

    /// Skips cues and announcements up to the next screen; nil once the stream has ended.
    static func nextScreen(_ iterator: inout AsyncStream<FlowOutput>.Iterator) async -> Screen? {
        while let output = await iterator.next() {
            if case .screen(let screen) = output { return screen }
        }
        return nil
    }

    /// Everything left on a stream that has finished (or is about to).
    static func remaining(_ iterator: inout AsyncStream<FlowOutput>.Iterator) async -> [FlowOutput] {
        var outputs: [FlowOutput] = []
        while let output = await iterator.next() { outputs.append(output) }
        return outputs
    }

    static func all(_ stream: AsyncStream<FlowOutput>) async -> [FlowOutput] {
        var iterator = stream.makeAsyncIterator()
        return await remaining(&iterator)
    }

    static func screens(_ outputs: [FlowOutput]) -> [Screen] {
        outputs.compactMap { if case .screen(let screen) = $0 { screen } else { nil } }
    }

    static func cues(_ outputs: [FlowOutput]) -> [HapticCue] {
        outputs.compactMap { if case .cue(let cue) = $0 { cue } else { nil } }
    }

    static func announcements(_ outputs: [FlowOutput]) -> [Announcement] {
        outputs.compactMap { if case .announcement(let announcement) = $0 { announcement } else { nil } }
    }

    static func grid(_ screen: Screen?) -> TileGrid? {
        if case .tileGrid(let grid)? = screen?.content { grid } else { nil }
    }

    static func field(_ screen: Screen?) -> PasswordField? {
        if case .passwordField(let field)? = screen?.content { field } else { nil }
    }

    static func actions(_ screen: Screen?) -> [ScreenAction] {
        if case .actions(let actions)? = screen?.content { actions } else { [] }
    }

    /// Part 1 of 2 of some other backup. The collector checks a set's ID only once the set is
    /// complete, so one well-formed code with another ID is all a test needs.
    static func otherBackupCode() throws -> String {
        try VB1Code(id: "0BADC0DE", index: 1, count: 2, data: [1, 2, 3]).text
    }

    /// Claims to be part 2 of the spec's backup but carries other bytes.
    static func forgedSecondCode() throws -> String {
        try VB1Code(id: VB1Vector.id, index: 2, count: 3, data: [9, 9, 9]).text
    }
}

/// A key deriver that blocks until the test lets it go, the way a long scrypt run would, then
/// derives for real. It reports each start and remembers how many calls overlapped.
final class ImportGatedDeriver: KeyDeriver, @unchecked Sendable {
    // @unchecked: DispatchSemaphore is thread-safe but not marked Sendable on every platform;
    // everything else here is behind the Mutex or immutable.
    private struct Counts {
        var calls = 0
        var active = 0
        var mostActive = 0
    }

    private let counts = Mutex(Counts())
    private let gate = DispatchSemaphore(value: 0)
    private let real = ScryptKeyDeriver()
    /// The call number (1, 2, …) of each derivation as it starts.
    let starts: AsyncStream<Int>
    private let startsContinuation: AsyncStream<Int>.Continuation

    init() {
        (starts, startsContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    }

    var callCount: Int { counts.withLock { $0.calls } }
    /// The most derivations that were ever inside `deriveKey` at once.
    var mostConcurrentCalls: Int { counts.withLock { $0.mostActive } }

    /// Lets one blocked (or the next) derivation finish.
    func release() { gate.signal() }

    func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
        let call = counts.withLock { c in
            c.calls += 1
            c.active += 1
            c.mostActive = max(c.mostActive, c.active)
            return c.calls
        }
        defer { counts.withLock { $0.active -= 1 } }
        startsContinuation.yield(call)
        gate.wait()
        return try real.deriveKey(password: password, salt: salt, parameters: parameters)
    }
}
