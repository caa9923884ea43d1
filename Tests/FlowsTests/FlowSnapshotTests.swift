@testable import Flows
import TestKit
import HAL
import HALFakes
import Testing

/// Text snapshots of every kind of screen each flow publishes, at 40 and 80 columns, with and
/// without Reduce Motion. The screens come from the engines' own output streams (driven by the
/// fakes on a manual clock), never from hand-built `Screen` values, so a change to an engine's
/// copy or layout shows up here as a snapshot diff.
///
/// Files: `Snapshots/<flow>/<screen>-w<width>[-reduced].txt`. Re-record with
/// `RECORD_SNAPSHOTS=1 swift test --filter FlowSnapshotTests` (see README.md).
@Suite("Flow snapshots", .timeLimit(.minutes(2)))
struct FlowSnapshotTests {
    typealias Kit = ImportKit

    /// The two motion preferences every screen is drawn under.
    enum Motion: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case standard, reduced

        var settings: MotionSettings { self == .reduced ? .reduced : .standard }
        /// The file-name ending: nothing for standard motion.
        var suffix: String { self == .reduced ? "-reduced" : "" }
        var testDescription: String { rawValue }
    }

    static let widths = [40, 80]

    /// Draws `screen` at every width and compares each drawing with its file.
    static func snapshot(_ screen: Screen, _ name: String, _ motion: Motion,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        for width in widths {
            let text = TextSnapshot.render(screen, width: width)
            let tooWide = text.split(separator: "\n").filter { TextLayout.displayWidth($0) > width }
            #expect(tooWide.isEmpty, "\(name) has lines wider than \(width) columns: \(tooWide)",
                    sourceLocation: sourceLocation)
            assertSnapshot(text, named: "\(name)-w\(width)\(motion.suffix)", sourceLocation: sourceLocation)
        }
    }

    /// The first (or last) published screen that `matches`; a missing one fails the test with
    /// the list of what the engine did publish.
    static func screen(_ what: String, in screens: [Screen], last: Bool = false,
                       sourceLocation: SourceLocation = #_sourceLocation,
                       where matches: (Screen) -> Bool) throws -> Screen {
        let found = last ? screens.last(where: matches) : screens.first(where: matches)
        let seen = screens.map { "\($0.icon) “\($0.title)”" }.joined(separator: ", ")
        return try #require(found, "no \(what) screen among: \(seen)", sourceLocation: sourceLocation)
    }

    static func percent(_ screen: Screen) -> Int? {
        if case .progress(let value, _) = screen.content { Int((value * 100).rounded()) } else { nil }
    }

    static func countdown(_ screen: Screen) -> Int? {
        if case .countdown(let number) = screen.content { number } else { nil }
    }

    static func isPickList(_ screen: Screen) -> Bool {
        if case .pickList = screen.content { true } else { false }
    }
}

// MARK: - Body scan

extension FlowSnapshotTests {
    static let nearMirror = MirrorScript()
    static var farMirror: MirrorScript {
        var script = MirrorScript()
        script.name = "Mirror 0B17"
        script.address = BLEAddress(string: "C0:FF:EE:00:0B:17/random")!
        script.serial = [0x00, 0x00, 0x0B, 0x17]
        script.rssi = -77
        return script
    }

    /// A good scan that asks every question: two mirrors to choose from, and the alignment to
    /// confirm. Returns every screen it published.
    static func goodScanScreens(_ motion: Motion) async throws -> [Screen] {
        let clock = ManualClock()
        let near = FakeMirror(script: nearMirror, clock: clock)
        let far = FakeMirror(script: farMirror, clock: clock)
        let transport = FakeScaleTransport(
            peripherals: [.mirror(near), .mirror(far, appearsAfter: .milliseconds(600))], clock: clock)
        var configuration = ScanHarness.configuration {
            $0.autoAnswer = false
            $0.motion = motion.settings
        }
        configuration.discoveryWindow = .seconds(1)
        let harness = ScanHarness(clock: clock, mirror: near, transport: transport, configuration: configuration)
        let flow = harness.flow
        let outcome = try #require(await harness.run { state in
            switch state {
            case .selectMirror: flow.pick(mirror: nearMirror.address)
            case .confirmAlignment: flow.confirmAlignment()
            default: break
            }
        })
        await far.shutDown()
        #expect(outcome.kind == .complete)
        #expect(outcome.states.contains(.selectMirror) && outcome.states.contains(.warmingUp))
        return harness.log.screens
    }

    @Test("Body scan: every state of a good scan", arguments: Motion.allCases)
    func bodyScanGoodPath(_ motion: Motion) async throws {
        let screens = try await Self.goodScanScreens(motion)
        let radio = "dot.radiowaves.left.and.right"
        var picks: [(String, Screen)] = []
        func take(_ name: String, last: Bool = false, where matches: (Screen) -> Bool) throws {
            picks.append((name, try Self.screen(name, in: screens, last: last, where: matches)))
        }

        let looking = try Self.screen("looking for a mirror", in: screens) { $0.icon == radio }
        picks.append(("connecting-looking", looking))
        try take("connecting-mirror") { $0.icon == radio && $0.title != looking.title }
        try take("selectMirror") { Self.isPickList($0) }
        try take("waitForScale") { $0.icon == "scalemass" }
        try take("preflight") { $0.icon == "checklist" }
        try take("alignScale") { $0.icon == "scope" }
        try take("alignScale-tip") { $0.icon == "scope" && $0.footer != nil }
        try take("alignScale-linedUp", last: true) { $0.icon == "scope" }
        try take("confirmAlignment") { if case .actions = $0.content { $0.icon == "checkmark.circle" } else { false } }
        try take("warmingUp") { $0.icon == "sun.max" }
        try take("phoneDown-offScale") { $0.icon == "figure.stand" && $0.footer == nil }
        try take("phoneDown-onScale") { $0.icon == "figure.stand" && $0.footer != nil }
        for number in [3, 2, 1] {
            try take("countdown-\(number)") { Self.countdown($0) == number }
        }
        try take("scanning-40") { $0.icon == "viewfinder" && Self.percent($0) == 40 }
        try take("stepOff") { $0.icon == "figure.walk" }
        try take("processing-50") { $0.icon == "gearshape.2" && Self.percent($0) == 50 }
        try take("complete", last: true) { _ in true }

        #expect(!screens.contains { $0.footer?.tone == .warning }, "a good scan never says it is slow")
        for (name, screen) in picks {
            Self.snapshot(screen, "bodyscan/\(name)", motion)
        }
    }

    struct FailureCase: Sendable, CustomTestStringConvertible {
        var reason: BodyScanFailure.Reason
        var script: MirrorScript
        /// No peripheral at all, for `notFound`.
        var noMirror = false
        var testDescription: String { reason.rawValue }
    }

    static var failureCases: [FailureCase] {
        var lowBattery = MirrorScript()
        lowBattery.info.batteryPercent = 12
        return [
            FailureCase(reason: .mirrorError, script: MirrorScript(fault: .error(.userMoved, in: .scanning, after: .seconds(1)))),
            FailureCase(reason: .timedOut, script: MirrorScript(fault: .silence(in: .warmingUp))),
            FailureCase(reason: .disconnected, script: MirrorScript(fault: .disconnect(in: .scanning, after: .seconds(1)))),
            FailureCase(reason: .preflight, script: lowBattery),
            FailureCase(reason: .notFound, script: MirrorScript(), noMirror: true),
        ]
    }

    /// Each failure reason's screen, and the "taking longer than usual" screen where a wait
    /// warned before it gave up (named after the state that was slow).
    @Test("Body scan: failures and slow waits", arguments: failureCases, Motion.allCases)
    func bodyScanFailure(_ scenario: FailureCase, _ motion: Motion) async throws {
        let harness: ScanHarness
        if scenario.noMirror {
            let clock = ManualClock()
            harness = ScanHarness(clock: clock, mirror: FakeMirror(clock: clock),
                                  transport: FakeScaleTransport(peripherals: [], clock: clock),
                                  configuration: ScanHarness.configuration { $0.motion = motion.settings })
        } else {
            harness = ScanHarness(script: scenario.script) { $0.motion = motion.settings }
        }
        let outcome = try #require(await harness.run())
        let failure = try #require(outcome.failure)
        #expect(failure.reason == scenario.reason)

        let screens = harness.log.screens
        let failed = try #require(screens.last)
        #expect(failed.footer?.tone == .error)
        Self.snapshot(failed, "bodyscan/failed-\(scenario.reason.rawValue)", motion)

        if let slow = screens.last(where: { $0.footer?.tone == .warning }) {
            Self.snapshot(slow, "bodyscan/\(failure.state.rawValue)-slow", motion)
        }
        if scenario.reason == .timedOut {
            #expect(screens.contains { $0.footer?.tone == .warning }, "a timeout is warned about first")
        }
    }
}

// MARK: - Import (scanning the codes)

extension FlowSnapshotTests {
    struct ImportRun {
        var outcome: ImportOutcome
        var screens: [Screen]
    }

    /// Feeds `batches` (one per frame) to a fresh import flow, lets `then` press buttons once the
    /// source has ended, and returns every screen published.
    static func importRun(_ batches: [[DecodedSymbol]], _ motion: Motion, endError: CameraError? = nil,
                          then: (BackupImportFlow) -> Void = { _ in }) async -> ImportRun {
        let clock = ManualClock()
        let source = FakeCodeSource(batches: batches, interval: Kit.frameInterval, clock: clock, endError: endError)
        let flow = BackupImportFlow(codes: source, clock: clock, motion: motion.settings)
        let run = Task { await flow.run() }
        await Kit.deliverFrames(batches.count, on: clock)
        let outcome = await run.value
        then(flow)
        flow.cancel()
        return ImportRun(outcome: outcome, screens: Kit.screens(await Kit.all(flow.outputs)))
    }

    static func texts(_ texts: [String]) -> [[DecodedSymbol]] {
        texts.map { [DecodedSymbol(text: $0)] }
    }

    @Test("Import: every screen of the code scan", arguments: Motion.allCases)
    func importScreens(_ motion: Motion) async throws {
        let codes = VB1Vector.codes
        let scanIcon = BackupImportFlow.scanIcon
        func grid(_ screen: Screen) -> TileGrid? { Kit.grid(screen) }
        func isMessage(_ screen: Screen) -> Bool { screen.icon == scanIcon && screen.footer?.tone == .warning }

        // A whole set, out of order so the tiles fill unevenly.
        let good = await Self.importRun(Self.texts([codes[0], codes[2], codes[1]]), motion)
        #expect(good.outcome == .completed(container: VB1Vector.container, backupID: VB1Vector.id, codeCount: 3))
        Self.snapshot(try Self.screen("first", in: good.screens) { $0.content == .none }, "import/intro", motion)
        for count in 1...2 {
            let partial = try Self.screen("\(count) scanned", in: good.screens) { grid($0)?.scannedCount == count }
            Self.snapshot(partial, "import/scanned-\(count)of3", motion)
        }
        Self.snapshot(try Self.screen("all scanned", in: good.screens) { grid($0)?.scannedCount == 3 },
                      "import/complete", motion)

        let other = await Self.importRun(Self.texts([codes[0], try Kit.otherBackupCode()]), motion)
        Self.snapshot(try Self.screen("another backup's code", in: other.screens, where: isMessage),
                      "import/otherBackup", motion)

        let stray = await Self.importRun(Self.texts([codes[0], "https://example.com/menu"]), motion)
        Self.snapshot(try Self.screen("not a backup code", in: stray.screens, where: isMessage),
                      "import/notABackup", motion)

        // A forged second code, then the real one: two different codes 2 of 3 break the set.
        // Start Over then brings the first screen back.
        let damaged = await Self.importRun(Self.texts([codes[0], try Kit.forgedSecondCode(), codes[1]]), motion) { flow in
            flow.startOver()
        }
        Self.snapshot(try Self.screen("damaged", in: damaged.screens) { !Kit.actions($0).isEmpty },
                      "import/damaged", motion)
        let fresh = try #require(damaged.screens.last)
        #expect(fresh.content == .none)
        Self.snapshot(fresh, "import/startedOver", motion)

        let vanished = await Self.importRun(Self.texts([codes[2], codes[0]]), motion, endError: .disappeared("/dev/video0"))
        #expect(vanished.outcome == .sourceEnded(scanned: 2, of: 3))
        Self.snapshot(try Self.screen("camera gone", in: vanished.screens) { $0.icon == BackupImportFlow.cameraGoneIcon },
                      "import/cameraGone", motion)
    }
}

// MARK: - Decrypt (the password)

extension FlowSnapshotTests {
    /// A fixed "measured" speed, so the decrypting line is the same on every machine: at the
    /// vector's N·r·p of 8192 it promises "up to 40 seconds".
    static let estimate = DerivationTimeEstimate(secondsPerUnit: 0.003)

    /// Submits `password` to a fresh decrypt flow, lets it end (leaving if it asks again), and
    /// returns every screen published.
    static func decryptScreens(_ container: [UInt8], password: String?, _ motion: Motion) async -> [Screen] {
        let clock = ManualClock()
        let flow = BackupDecryptFlow(container: container, deriver: CountingDeriver(), timeEstimate: estimate,
                                     clock: clock, motion: motion.settings)
        var outputs = flow.outputs.makeAsyncIterator()
        var screens: [Screen] = []
        if let password {
            flow.submit(password: password)
            // Read until the attempt has been answered: a field again, or a screen without one.
            while let screen = await Kit.nextScreen(&outputs) {
                screens.append(screen)
                if screens.count > 1, screen.content != .spinner { break }
            }
        }
        let run = Task { await flow.run() }
        if screens.last?.icon == BackupDecryptFlow.unlockedIcon, motion == .standard {
            await clock.waitForSleepers(1)  // the open lock's moment on screen
            clock.advance(by: .milliseconds(600))
        } else if Kit.field(screens.last) != nil {
            flow.dismiss()
        }
        _ = await run.value
        return screens + Kit.screens(await Kit.remaining(&outputs))
    }

    @Test("Decrypt: every screen of the password step", arguments: Motion.allCases)
    func decryptScreens(_ motion: Motion) async throws {
        let opened = await Self.decryptScreens(VB1Vector.container, password: VB1Vector.password, motion)
        Self.snapshot(try Self.screen("idle", in: opened) { Kit.field($0)?.focused == true }, "decrypt/idle", motion)
        let decrypting = try Self.screen("decrypting", in: opened) { $0.content == .spinner }
        #expect(decrypting.footer?.text == Self.estimate.decryptingLine(for: VB1Vector.parameters))
        Self.snapshot(decrypting, "decrypt/decrypting", motion)
        Self.snapshot(try Self.screen("unlocked", in: opened) { $0.icon == BackupDecryptFlow.unlockedIcon },
                      "decrypt/success", motion)

        let refused = await Self.decryptScreens(VB1Vector.container, password: "not the password", motion)
        Self.snapshot(try Self.screen("wrong password", in: refused) { Kit.field($0)?.status == .error },
                      "decrypt/wrongPassword", motion)

        var flipped = VB1Vector.container
        flipped[VB1Container.headerLength + 10] ^= 0x01  // one ciphertext bit
        let damaged = await Self.decryptScreens(flipped, password: VB1Vector.password, motion)
        let broken = try #require(damaged.last)
        #expect(broken.footer?.tone == .error && Kit.field(broken) == nil)
        Self.snapshot(broken, "decrypt/damaged", motion)

        // Refused before any password is asked for: settings this reader won't run.
        let unsupported = await Self.decryptScreens(craftedContainer(logN: 23, r: 8, p: 1), password: nil, motion)
        Self.snapshot(try #require(unsupported.last), "decrypt/unsupported", motion)
    }

    /// Cancel while decrypting brings the field back at once (with a crossfade where motion is on).
    @Test("Decrypt: back to the field after Cancel", arguments: Motion.allCases)
    func decryptCancelled(_ motion: Motion) async throws {
        let deriver = ImportGatedDeriver()
        var starts = deriver.starts.makeAsyncIterator()
        let flow = BackupDecryptFlow(container: VB1Vector.container, deriver: deriver, timeEstimate: Self.estimate,
                                     clock: ManualClock(), motion: motion.settings)
        var outputs = flow.outputs.makeAsyncIterator()
        flow.submit(password: VB1Vector.password)
        _ = await starts.next()  // held in the decrypting state
        flow.cancel()
        deriver.release()
        #expect(await eventually { flow.runningDerivations == 0 })
        flow.dismiss()
        #expect(await flow.run() == .cancelled)
        let screens = Kit.screens(await Kit.remaining(&outputs))
        let back = try #require(screens.last)
        #expect(Kit.field(back)?.focused == true)
        Self.snapshot(back, "decrypt/idle-afterCancel", motion)
    }
}
