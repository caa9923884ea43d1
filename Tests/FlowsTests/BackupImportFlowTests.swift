@testable import Flows
import TestKit
import HAL
import HALFakes
import Testing

@Suite("Backup import: scanning codes", .timeLimit(.minutes(1)))
struct BackupImportFlowTests {
    typealias Kit = ImportKit
    let codes = VB1Vector.codes
    var expectedCompletion: ImportOutcome {
        .completed(container: VB1Vector.container, backupID: VB1Vector.id, codeCount: 3)
    }

    @Test(arguments: permutations([0, 1, 2]))
    func theSpecsCodesCompleteInAnyOrder(order: [Int]) async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(order.map { codes[$0] }, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(3, on: clock)
        #expect(await run.value == expectedCompletion)
        #expect(BackupImportFlow.navigationTitle == "Scan Backup")

        let screens = Kit.screens(await Kit.all(flow.outputs))
        #expect(screens.first == Screen(
            icon: "qrcode.viewfinder", title: "Scan the QR codes",
            subtitle: "From a PDF backup, or the Export screen on another device. Any order works."))
        #expect(screens.dropFirst().map { Kit.grid($0)?.progressLine } == ["1 of 3 scanned", "2 of 3 scanned", "3 of 3 scanned"])
        // Tiles are numbered from 0, codes from 1: the first tile ticked is the first code scanned.
        #expect(Kit.grid(screens[1])?.tiles.filter { $0.state == .scanned }.map(\.index) == [order[0]])
    }

    @Test func threeCodesGiveTwoLightImpactsThenSuccess() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(codes, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(3, on: clock)
        _ = await run.value

        let outputs = await Kit.all(flow.outputs)
        #expect(Kit.cues(outputs) == [.lightImpact, .lightImpact, .success])
        let grids = Kit.screens(outputs).dropFirst()
        #expect(grids.allSatisfy { $0.motion == .bounce && $0.footer == nil })
        #expect(Kit.grid(grids.last)?.fraction == 1)
    }

    @Test func duplicatesPublishNothing() async {
        let clock = ManualClock()
        let texts = [codes[0], codes[0], codes[1], codes[0], codes[1], codes[1], codes[2]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(texts.count, on: clock)
        #expect(await run.value == expectedCompletion)

        let outputs = await Kit.all(flow.outputs)
        #expect(Kit.screens(outputs).count == 4, "the first screen and one per new code")
        #expect(Kit.cues(outputs) == [.lightImpact, .lightImpact, .success])
    }

    @Test func anotherBackupsCodeFirstDoesNotLockOutTheRealSet() async throws {
        let clock = ManualClock()
        let texts = [try Kit.otherBackupCode(), codes[0], codes[1], codes[2]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(texts.count, on: clock)
        #expect(await run.value == expectedCompletion)

        let outputs = await Kit.all(flow.outputs)
        let screens = Kit.screens(outputs)
        // The stray came first, so its backup is the one counted: 1 of 2.
        #expect(Kit.grid(screens[1])?.progressLine == "1 of 2 scanned")
        // The real codes say they belong elsewhere, once (the same message is not repeated),
        // and leave the count alone.
        let message = screens[2]
        #expect(message.footer == Footer("That code belongs to a different backup.", tone: .warning))
        #expect(Kit.grid(message) == Kit.grid(screens[1]))
        #expect(screens.count == 4)
        #expect(Kit.grid(screens[3])?.progressLine == "3 of 3 scanned")
        #expect(Kit.cues(outputs) == [.lightImpact, .success])
    }

    @Test func nonBackupCodesGetAMessageAndNoCount() async {
        let clock = ManualClock()
        let batches: [[DecodedSymbol]] = [
            [DecodedSymbol(text: "https://example.com/menu")],
            [DecodedSymbol(bytes: [0xFF, 0xFE, 0x00])],  // not UTF-8 at all
            [DecodedSymbol(text: codes[1])],
            [DecodedSymbol(text: "VB1:32966C6C:4/3:AAAA")],  // malformed: i > n
        ]
        let source = FakeCodeSource(batches: batches, interval: Kit.frameInterval, clock: clock)
        let flow = BackupImportFlow(codes: source, clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(batches.count, on: clock)
        #expect(await run.value == .sourceEnded(scanned: 1, of: 3))
        flow.cancel()

        let outputs = await Kit.all(flow.outputs)
        let screens = Kit.screens(outputs)
        let notABackup = Footer("That isn't a backup code.", tone: .warning)
        #expect(screens[1].footer == notABackup)
        #expect(screens[1].content == .none, "nothing counted")
        #expect(Kit.grid(screens[2])?.progressLine == "1 of 3 scanned")
        #expect(screens[3].footer == notABackup)
        #expect(Kit.grid(screens[3])?.progressLine == "1 of 3 scanned")
        #expect(Kit.cues(outputs) == [.lightImpact])
        #expect(Kit.announcements(outputs).contains(Announcement("That isn't a backup code.")))
    }

    @Test func aDamagedSetOffersStartOverAndStartingOverWorks() async throws {
        let clock = ManualClock()
        let texts = [codes[0], try Kit.forgedSecondCode(), codes[1], codes[2], codes[0], codes[1]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock)
        var outputs = flow.outputs.makeAsyncIterator()
        let run = Task { await flow.run() }

        await Kit.deliverFrames(3, on: clock)
        var screen = await Kit.nextScreen(&outputs)
        while let current = screen, Kit.actions(current).isEmpty {
            screen = await Kit.nextScreen(&outputs)
        }
        #expect(Kit.actions(screen) == [ScreenAction(id: "startOver", title: "Start Over", role: .primary)])
        #expect(screen?.footer?.tone == .error)
        #expect(screen?.footer?.text == "These codes don't fit together. Start over and scan them again.")
        #expect(flow.progress.scanned == 2, "the damaged code is not counted")

        flow.startOver()
        let fresh = await Kit.nextScreen(&outputs)
        #expect(fresh?.content == ScreenContent.none)
        #expect(fresh?.title == "Scan the QR codes")
        #expect(flow.progress.scanned == 0)

        await Kit.deliverFrames(3, on: clock)
        #expect(await run.value == expectedCompletion)
        let rest = await Kit.remaining(&outputs)
        #expect(Kit.screens(rest).compactMap { Kit.grid($0)?.progressLine }
            == ["1 of 3 scanned", "2 of 3 scanned", "3 of 3 scanned"])
    }

    @Test func codesWaitingForStartOverAreIgnored() async throws {
        let clock = ManualClock()
        let texts = [codes[0], try Kit.forgedSecondCode(), codes[1], codes[2]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(texts.count, on: clock)
        #expect(await run.value == .sourceEnded(scanned: 2, of: 3))
        flow.cancel()
        let cues = Kit.cues(await Kit.all(flow.outputs))
        #expect(cues == [.lightImpact, .lightImpact, .warning])
    }

    @Test func unattendedDamagedSetEndsTheRun() async throws {
        let clock = ManualClock()
        let texts = [codes[0], try Kit.forgedSecondCode(), codes[1]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock, unattended: true)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(3, on: clock)
        let outcome = await run.value
        guard case .damaged(let reason) = outcome else {
            Issue.record("expected .damaged, got \(outcome)")
            return
        }
        #expect(!reason.isEmpty)
        let screens = Kit.screens(await Kit.all(flow.outputs))
        #expect(screens.last?.footer?.tone == .error)
        #expect(Kit.actions(screens.last).isEmpty, "nobody is there to press Start Over")
    }

    @Test func aVanishedCameraKeepsTheCodesAndANewOneCarriesOn() async {
        let clock = ManualClock()
        let first = Kit.source([codes[2], codes[0]], clock: clock, endError: .disappeared("/dev/video0"))
        let flow = BackupImportFlow(codes: first, clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(2, on: clock)
        #expect(await run.value == .sourceEnded(scanned: 2, of: 3))
        #expect(flow.progress.scanned == 2 && flow.progress.of == 3)

        let second = Kit.source([codes[0], codes[1]], clock: clock)
        let resumed = Task { await flow.resume(with: second) }
        await Kit.deliverFrames(2, on: clock)
        #expect(await resumed.value == expectedCompletion)
        #expect(await flow.run() == expectedCompletion, "asking again gives the same answer")

        let outputs = await Kit.all(flow.outputs)
        let screens = Kit.screens(outputs)
        let gone = screens.first { $0.icon == "video.slash" }
        #expect(gone?.title == "Camera disconnected")
        #expect(gone?.footer?.text.contains("disappeared") == true)
        #expect(Kit.grid(gone)?.progressLine == "2 of 3 scanned")
        #expect(Kit.announcements(outputs).contains { $0.priority == .assertive })
        #expect(Kit.cues(outputs) == [.lightImpact, .lightImpact, .success], "the re-scanned code stays silent")
    }

    @Test func aSourceThatJustEndsReportsWhatWasScanned() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source([], clock: clock), clock: clock)
        #expect(await flow.run() == .sourceEnded(scanned: 0, of: nil))
        flow.cancel()
        let screens = Kit.screens(await Kit.all(flow.outputs))
        #expect(screens.last?.footer?.text == "The camera stopped sending pictures.")
    }

    @Test func reduceMotionTurnsEveryHintIntoACrossfade() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(codes, clock: clock), clock: clock, motion: .reduced)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(3, on: clock)
        _ = await run.value
        let screens = Kit.screens(await Kit.all(flow.outputs))
        #expect(screens.dropFirst().allSatisfy { $0.motion == .crossfade })
        #expect(screens.allSatisfy { $0.motion == nil || $0.motion == .crossfade })
    }

    @Test func cancelEndsTheScan() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(codes, clock: clock), clock: clock)
        var outputs = flow.outputs.makeAsyncIterator()
        let run = Task { await flow.run() }
        await Kit.deliverFrames(1, on: clock)
        _ = await Kit.nextScreen(&outputs)  // the first screen
        #expect(Kit.grid(await Kit.nextScreen(&outputs))?.progressLine == "1 of 3 scanned")
        flow.cancel()
        #expect(await run.value == .cancelled)
        // The stream has finished with the flow: reading the rest returns.
        #expect(Kit.cues(await Kit.remaining(&outputs)) == [.lightImpact])
    }

    @Test func aNewSourceTakesOverFromOneStillRunning() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source([codes[0], codes[0], codes[0]], clock: clock), clock: clock)
        var outputs = flow.outputs.makeAsyncIterator()
        let run = Task { await flow.run() }
        await Kit.deliverFrames(1, on: clock)
        _ = await Kit.nextScreen(&outputs)
        _ = await Kit.nextScreen(&outputs)  // 1 of 3
        await clock.waitForSleepers(1)  // the first source waits for its next frame

        let resumed = Task { await flow.resume(with: Kit.source([codes[1], codes[2]], clock: clock)) }
        #expect(await run.value == .sourceEnded(scanned: 1, of: 3))
        await Kit.deliverFrames(2, on: clock)
        #expect(await resumed.value == expectedCompletion)
    }

    @Test func cancellingTheCallersTaskCancelsTheScan() async {
        let clock = ManualClock()
        let flow = BackupImportFlow(codes: Kit.source(codes, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await clock.waitForSleepers(1)
        run.cancel()
        #expect(await run.value == .cancelled)
    }

    @Test func aDamagedSetStillOffersStartOverWithANewCamera() async throws {
        let clock = ManualClock()
        let texts = [codes[0], try Kit.forgedSecondCode(), codes[1]]
        let flow = BackupImportFlow(codes: Kit.source(texts, clock: clock), clock: clock)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(3, on: clock)
        #expect(await run.value == .sourceEnded(scanned: 2, of: 3))

        let resumed = Task { await flow.resume(with: Kit.source([], clock: clock)) }
        #expect(await resumed.value == .sourceEnded(scanned: 2, of: 3))
        flow.cancel()
        let screens = Kit.screens(await Kit.all(flow.outputs))
        let offers = screens.filter { !Kit.actions($0).isEmpty }
        #expect(offers.count == 2, "offered when the set broke, and again once a camera is back")
    }
}
