@testable import Flows
import TestKit
import HAL
import HALFakes
import Testing

/// The typed events the flows publish, so callers decide on facts instead of rendered words.
@Suite("Flow events", .timeLimit(.minutes(1)))
struct FlowEventTests {
    typealias Kit = ImportKit

    /// Until the flow has handled what the last step of time woke: at least `sleepers` tasks sleep
    /// and no sleep has begun or ended for a good while of scheduler turns.
    static func settle(_ clock: ManualClock, sleepers: Int) async {
        await clock.waitForSleepers(sleepers)
        var quiet = 0
        var last = clock.activity
        while quiet < 200 {
            await Task.yield()
            let now = clock.activity
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
    }

    /// Reads the flow's outputs until `count` more `waiting` events have come, keeping all it read
    /// in `seen`. A flow says `waiting` when it (re)arms its idle deadline, so after a new code the
    /// test knows the deadline counts from this instant before it moves the clock on (a loaded
    /// machine can leave the flow a step behind the clock otherwise, and the run never ends).
    static func waitings(_ count: Int, from outputs: inout AsyncStream<FlowOutput>.Iterator, into seen: inout [FlowOutput]) async {
        var found = 0
        while found < count, let output = await outputs.next() {
            seen.append(output)
            if case .event(.waiting) = output { found += 1 }
        }
    }

    /// The events, without the `waiting` ones (tests of those ask for them).
    static func events(_ outputs: [FlowOutput], waiting: Bool = false) -> [FlowEvent] {
        outputs.compactMap { output -> FlowEvent? in
            guard case .event(let event) = output else { return nil }
            if case .waiting = event, !waiting { return nil }
            return event
        }
    }

    /// Frames keep coming but none brings a new code: the scan ends at the idle limit, which
    /// counts from the last new code, on the injected clock.
    @Test func aSourceWithNoNewCodeEndsAtTheIdleLimit() async {
        let clock = ManualClock()
        let codes = VB1Vector.codes
        let texts = [codes[0]] + Array(repeating: codes[0], count: 8) + [codes[1]] + Array(repeating: codes[1], count: 40)
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock, unattended: true, idleLimit: .seconds(1))
        var iterator = flow.outputs.makeAsyncIterator()
        var outputs: [FlowOutput] = []
        let run = Task { await flow.run() }
        // The wait is said as the scan begins.
        await Self.waitings(1, from: &iterator, into: &outputs)
        // Frames every 100 ms: code 1 at 0.1 s, repeats, code 2 at 1.0 s, repeats. Both the source
        // and the idle timer sleep between frames.
        for frame in 1...20 {
            await Self.settle(clock, sleepers: 2)
            clock.advance(by: Kit.frameInterval)
            // A new code re-arms the deadline: only then may time go on.
            if frame == 1 || frame == 10 { await Self.waitings(1, from: &iterator, into: &outputs) }
        }
        #expect(await run.value == .timedOut(scanned: 2, of: 3))
        // Code 2 arrived at 1.0 s; the limit ran out a second later, not a second after code 1.
        #expect(clock.now.offset == .seconds(2))
        outputs += await Kit.remaining(&iterator)
        #expect(Self.events(outputs) == [.idleDeadlinePassed(scanned: 2, of: 3)])
        // The wait is said at the start and again with each new code.
        #expect(Self.events(outputs, waiting: true).filter { if case .waiting = $0 { true } else { false } }
                == [.waiting(for: "a backup code", limit: .seconds(1)), .waiting(for: "the next code", limit: .seconds(1)),
                    .waiting(for: "the next code", limit: .seconds(1))])
    }

    @Test func theLimitDoesNotRunOutEarly() async {
        let clock = ManualClock()
        let texts = Array(repeating: VB1Vector.codes[0], count: 30)
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock, unattended: true, idleLimit: .seconds(1))
        var iterator = flow.outputs.makeAsyncIterator()
        var outputs: [FlowOutput] = []
        let run = Task { await flow.run() }
        await Self.waitings(1, from: &iterator, into: &outputs)
        for frame in 1...10 {
            await Self.settle(clock, sleepers: 2)
            clock.advance(by: Kit.frameInterval)
            // The one new code, at 0.1 s: the deadline is now 1.1 s.
            if frame == 1 { await Self.waitings(1, from: &iterator, into: &outputs) }
        }
        // 1.0 s after the scan began, but only 0.9 s after the last new code.
        await Self.settle(clock, sleepers: 2)
        #expect(flow.progress.scanned == 1)
        clock.advance(by: Kit.frameInterval)
        #expect(await run.value == .timedOut(scanned: 1, of: 3))
        #expect(clock.now.offset == .milliseconds(1100))
    }

    @Test func withoutALimitTheScanWaitsForTheSource() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(Array(repeating: VB1Vector.codes[0], count: 30), clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(30, on: clock)
        #expect(await run.value == .sourceEnded(scanned: 1, of: 3))
        flow.cancel()
        #expect(Self.events(await Kit.all(flow.outputs)) == [.sourceEnded(scanned: 1, of: 3)])
    }

    @Test func aDamagedSetIsAnEventBothWays() async throws {
        for unattended in [true, false] {
            let clock = ManualClock()
            // Code 2 twice, with different bytes: the set contradicts itself.
            let texts = [VB1Vector.codes[0], try Kit.forgedSecondCode(), VB1Vector.codes[1]] + Array(repeating: VB1Vector.codes[2], count: 5)
            let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock, unattended: unattended)
            var outputs = flow.outputs.makeAsyncIterator()
            let run = Task { await flow.run() }
            await Kit.deliverFrames(3, on: clock)
            var events: [FlowEvent] = []
            while let output = await outputs.next() {
                guard case .event(let event) = output else { continue }
                events.append(event)
                break
            }
            // Interactively the flow waits for Start Over; nobody presses it here.
            if !unattended { flow.cancel() }
            let outcome = await run.value
            #expect(events.count == 1)
            guard case .setDamaged(let reason)? = events.first else {
                Issue.record("no setDamaged event (unattended: \(unattended)): \(events)")
                continue
            }
            #expect(reason.contains("scanned before with different data"))
            #expect(unattended ? outcome == .damaged(reason) : outcome == .cancelled, "\(outcome)")
        }
    }

    @Test func thePasswordIsAskedForRefusedAndAskedForAgain() async {
        let clock = ManualClock()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: ScryptKeyDeriver(), clock: clock, motion: .reduced)
        var outputs = flow.outputs.makeAsyncIterator()
        var seen: [FlowEvent] = []
        func nextEvent() async -> FlowEvent? {
            while let output = await outputs.next() {
                if case .event(let event) = output { seen.append(event); return event }
            }
            return nil
        }
        #expect(await nextEvent() == .passwordWanted(attempt: 1))
        flow.submit(password: "wrong")
        #expect(await nextEvent() == .passwordRefused(attempts: 1))
        #expect(await nextEvent() == .passwordWanted(attempt: 2))
        flow.submit(password: "")
        #expect(await nextEvent() == .passwordEmpty)
        #expect(await nextEvent() == .passwordWanted(attempt: 2), "an empty password is no attempt")
        flow.submit(password: VB1Vector.password)
        #expect(await flow.run() == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
    }
}
