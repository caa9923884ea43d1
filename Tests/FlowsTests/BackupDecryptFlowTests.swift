@testable import Flows
import TestKit
import HAL
import HALFakes
import Testing

@Suite("Backup import: password", .timeLimit(.minutes(1)))
struct BackupDecryptFlowTests {
    typealias Kit = ImportKit

    static let idle = Screen(
        icon: "lock.shield.fill", title: "Enter Backup Password",
        subtitle: "Use the password this backup was made with.",
        content: .passwordField(PasswordField(maskedLength: 0, status: .normal, focused: true)))

    @Test func theSpecsCodesImportAndDecryptToThePlaintext() async {
        let clock = ManualClock()
        let scan = BackupImportFlow(codes: Kit.source([VB1Vector.codes[1], VB1Vector.codes[2], VB1Vector.codes[0]],
                                                      clock: clock), clock: clock)
        let scanning = Task { await scan.run() }
        await Kit.deliverFrames(3, on: clock)
        guard case .completed(let container, _, _) = await scanning.value else {
            Issue.record("the scan did not complete")
            return
        }

        let flow = BackupDecryptFlow(container: container, clock: clock, motion: .reduced)
        flow.submit(password: VB1Vector.password)
        let outcome = await flow.run()
        #expect(outcome == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
        if case .decrypted(let plaintext) = outcome { #expect(plaintext.count == 113) }

        let outputs = await Kit.all(flow.outputs)
        let screens = Kit.screens(outputs)
        #expect(screens.first == Self.idle)
        #expect(screens.map(\.icon) == ["lock.shield.fill", "lock.shield.fill", "lock.open.fill"])
        #expect(screens[1].content == .spinner)
        #expect(screens[1].footer == Footer("Decrypting. This can take a while.", tone: .secondary))
        #expect(screens[2].footer?.tone == .success)
        #expect(Kit.cues(outputs) == [.success])
    }

    /// With a limit on attempts, the refusal says how many are left (issue 27, item 17).
    @Test func aRefusalSaysTheAttemptsLeft() async {
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: CountingDeriver(), attemptLimit: 3, clock: ManualClock())
        var outputs = flow.outputs.makeAsyncIterator()
        _ = await Kit.nextScreen(&outputs)
        flow.submit(password: "wrong")
        _ = await Kit.nextScreen(&outputs)
        #expect(await Kit.nextScreen(&outputs)?.footer == Footer("Incorrect password — 2 attempts left", tone: .error))
    }

    @Test func aWrongPasswordIsRefusedThenTheRightOneOpens() async {
        let deriver = CountingDeriver()
        let clock = ManualClock()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: deriver, clock: clock)
        var outputs = flow.outputs.makeAsyncIterator()
        #expect(await Kit.nextScreen(&outputs) == Self.idle)

        flow.submit(password: "correct horse battery stapler")
        #expect(await Kit.nextScreen(&outputs)?.content == .spinner)
        let refused = await Kit.nextScreen(&outputs)
        #expect(Kit.field(refused) == PasswordField(maskedLength: 29, status: .error, focused: true))
        #expect(refused?.motion == .shake)
        #expect(refused?.footer == Footer("Incorrect password", tone: .error))
        #expect(refused?.icon == "lock.shield.fill", "the header does not change")
        #expect(await outputs.next() == .cue(.error))
        let spoken = await outputs.next()
        guard case .announcement(let announcement)? = spoken else {
            Issue.record("expected an announcement, got \(String(describing: spoken))")
            return
        }
        #expect(announcement.priority == .assertive)
        #expect(announcement.text.contains("Incorrect password"))

        flow.submit(password: VB1Vector.password)
        let run = Task { await flow.run() }
        await clock.waitForSleepers(1)  // the open lock's moment on screen
        clock.advance(by: .milliseconds(600))
        #expect(await run.value == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
        #expect(deriver.callCount == 2)
        let rest = await Kit.remaining(&outputs)
        #expect(Kit.screens(rest).last?.icon == "lock.open.fill")
        #expect(Kit.cues(rest) == [.success])
    }

    @Test func reduceMotionTurnsTheShakeIntoACrossfade() async {
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: ManualClock(), motion: .reduced)
        flow.submit(password: "wrong")
        var outputs = flow.outputs.makeAsyncIterator()
        var screen = await Kit.nextScreen(&outputs)
        while let current = screen, current.footer?.tone != .error { screen = await Kit.nextScreen(&outputs) }
        #expect(screen?.motion == .crossfade)
        flow.dismiss()
        #expect(await flow.run() == .cancelled)
    }

    @Test func aDamagedBackupIsNotCalledAWrongPassword() async {
        var container = VB1Vector.container
        container[VB1Container.headerLength + 10] ^= 0x01  // one ciphertext bit
        let flow = BackupDecryptFlow(container: container, clock: ManualClock(), motion: .reduced)
        flow.submit(password: VB1Vector.password)
        let outcome = await flow.run()
        guard case .damaged = outcome else {
            Issue.record("expected .damaged, got \(outcome)")
            return
        }
        let outputs = await Kit.all(flow.outputs)
        let last = Kit.screens(outputs).last
        #expect(last?.footer?.tone == .error)
        #expect(last?.footer?.text.contains("damaged") == true)
        #expect(!Kit.screens(outputs).contains { $0.footer?.text == "Incorrect password" })
        #expect(Kit.field(last) == nil, "no field to retry in")
    }

    @Test(arguments: [
        craftedContainer(logN: 23, r: 8, p: 1),  // N beyond the supported range
        craftedContainer(logN: 20, r: 16, p: 1),  // 2 GiB of scrypt memory
    ])
    func unsupportedParametersAreRefusedBeforeDeriving(bytes: [UInt8]) async {
        let deriver = CountingDeriver()
        let flow = BackupDecryptFlow(container: bytes, deriver: deriver, clock: ManualClock())
        flow.submit(password: VB1Vector.password)
        let outcome = await flow.run()
        guard case .unsupported(let reason) = outcome else {
            Issue.record("expected .unsupported, got \(outcome)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(deriver.callCount == 0)
        #expect(Kit.screens(await Kit.all(flow.outputs)).last?.footer?.tone == .error)
    }

    @Test func bytesThatAreNotABackupEndAsDamaged() async {
        let deriver = CountingDeriver()
        let flow = BackupDecryptFlow(container: Array("not a backup at all, just some text that is long enough".utf8),
                                     deriver: deriver, clock: ManualClock())
        guard case .damaged = await flow.run() else {
            Issue.record("expected .damaged")
            return
        }
        #expect(deriver.callCount == 0)
    }

    @Test func theDecryptingLineUsesTheMeasuredEstimate() async {
        let estimate = DerivationTimeEstimate(secondsPerUnit: 1e-6)
        let flow = BackupDecryptFlow(container: VB1Vector.container, timeEstimate: estimate, clock: ManualClock(),
                                     motion: .reduced)
        flow.submit(password: VB1Vector.password)
        _ = await flow.run()
        let screens = Kit.screens(await Kit.all(flow.outputs))
        #expect(screens[1].footer == Footer(estimate.decryptingLine(for: VB1Vector.parameters), tone: .secondary))
    }

    @Test func cancelReturnsToIdleAtOnceAndDropsTheLateResult() async {
        let deriver = ImportGatedDeriver()
        var starts = deriver.starts.makeAsyncIterator()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: deriver, clock: ManualClock(),
                                     motion: .reduced)
        var outputs = flow.outputs.makeAsyncIterator()
        #expect(await Kit.nextScreen(&outputs) == Self.idle)

        flow.submit(password: VB1Vector.password)
        #expect(await starts.next() == 1)
        #expect(flow.runningDerivations == 1)
        #expect(await Kit.nextScreen(&outputs)?.content == .spinner)

        flow.cancel()
        // Already published: cancel does not wait for the derivation.
        let back = await Kit.nextScreen(&outputs)
        #expect(Kit.field(back) == PasswordField(maskedLength: 0, status: .normal, focused: true))
        #expect(back?.icon == "lock.shield.fill")

        deriver.release()
        #expect(await eventually { flow.runningDerivations == 0 })
        flow.dismiss()
        #expect(await flow.run() == .cancelled, "the right password's late result was not applied")
        let rest = await Kit.remaining(&outputs)
        #expect(!Kit.screens(rest).contains { $0.icon == "lock.open.fill" })
        #expect(!Kit.cues(rest).contains(.success))
    }

    @Test func retryingWhileAnAbandonedDerivationRunsNeverOverlapsThem() async {
        let deriver = ImportGatedDeriver()
        var starts = deriver.starts.makeAsyncIterator()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: deriver, clock: ManualClock(),
                                     motion: .reduced)
        var outputs = flow.outputs.makeAsyncIterator()
        _ = await Kit.nextScreen(&outputs)

        flow.submit(password: "a wrong guess")
        #expect(await starts.next() == 1)
        // Cancel and retry again and again while the first derivation is stuck.
        for _ in 0..<3 {
            flow.cancel()
            flow.submit(password: VB1Vector.password)
            #expect(flow.runningDerivations == 1)
            #expect(deriver.callCount == 1, "the retry waits for the abandoned derivation")
        }
        let screens = [await Kit.nextScreen(&outputs), await Kit.nextScreen(&outputs)]
        #expect(screens.map { $0?.content } == [.spinner, Self.idle.content])

        deriver.release()  // the abandoned wrong guess returns; its result is dropped
        #expect(await starts.next() == 2)
        #expect(flow.runningDerivations == 1)
        deriver.release()
        #expect(await flow.run() == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
        #expect(deriver.callCount == 2, "only the latest retry ran")
        #expect(deriver.mostConcurrentCalls == 1)

        let rest = await Kit.remaining(&outputs)
        #expect(!Kit.screens(rest).contains { $0.footer?.text == "Incorrect password" })
        #expect(Kit.cues(rest) == [.success])
    }

    @Test func withReduceMotionTheFlowFinishesWithoutThePause() async {
        let clock = ManualClock()
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: clock, motion: .reduced)
        flow.submit(password: VB1Vector.password)
        #expect(await flow.run() == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
        #expect(clock.now.offset == .zero)
        #expect(clock.sleeperCount == 0)
        let last = Kit.screens(await Kit.all(flow.outputs)).last
        #expect(last?.icon == "lock.open.fill")
        #expect(last?.motion == .crossfade)
    }

    @Test func withoutReduceMotionTheOpenLockStaysUpForAMoment() async {
        let clock = ManualClock()
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: clock)
        var outputs = flow.outputs.makeAsyncIterator()
        flow.submit(password: VB1Vector.password)
        let run = Task { await flow.run() }

        var screen = await Kit.nextScreen(&outputs)
        while let current = screen, current.icon != "lock.open.fill" { screen = await Kit.nextScreen(&outputs) }
        #expect(screen?.motion == .replace)
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline?.offset == .milliseconds(600))
        clock.advance(by: .milliseconds(599))
        #expect(clock.sleeperCount == 1, "still showing the open lock")
        clock.advance(by: .milliseconds(1))
        #expect(await run.value == .decrypted(SecretBytes(copying: VB1Vector.plaintext)))
    }

    @Test func dismissFromIdleEndsAsCancelled() async {
        let deriver = CountingDeriver()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: deriver, clock: ManualClock())
        flow.submit(password: "")  // a stray Return on an empty field derives nothing, and says so
        flow.cancel()  // nothing to cancel while idle
        flow.dismiss()
        #expect(await flow.run() == .cancelled)
        #expect(deriver.callCount == 0)
        let outputs = await Kit.all(flow.outputs)
        var asked = Self.idle
        asked.footer = Footer(BackupDecryptFlow.emptyPasswordMessage, tone: .warning)
        #expect(Kit.screens(outputs) == [Self.idle, asked])
        #expect(FlowEventTests.events(outputs) == [.passwordWanted(attempt: 1), .passwordEmpty, .passwordWanted(attempt: 1)])
    }

    @Test func theRefusedScreenReadsWellAsText() async {
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: ManualClock(), motion: .reduced)
        flow.submit(password: "nope")
        var outputs = flow.outputs.makeAsyncIterator()
        var screen = await Kit.nextScreen(&outputs)
        while let current = screen, current.footer?.tone != .error { screen = await Kit.nextScreen(&outputs) }
        guard let screen else {
            Issue.record("no refused screen")
            return
        }
        let text = TextSnapshot.render(screen, width: 48)
        #expect(text.contains("Enter Backup Password"))
        #expect(text.contains("(field: error)"))
        #expect(text.contains("(error) Incorrect password"))
        flow.dismiss()
        _ = await flow.run()
    }
}
