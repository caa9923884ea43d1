import Foundation
import HAL
import Testing
@testable import hwprobe

/// `hwprobe import` on the bench camera: the codes of a backup made with the demo's password.
@Suite struct ImportCommandTests {
    struct Scratch {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-import-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws -> String {
            let path = path(name)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func theRightPasswordWritesThePlaintextWithMode0600() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let password = try scratch.write("password", DemoCommand.password + "\n")
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "sim:", "--password-file", password, "--out", out, "--json"])
        #expect(result.code == 0, "\(result.err.suffix(300))")
        let json = try JSONShape.parse(result.out)
        #expect(json.keySet == ["backupId", "codes", "bytes", "out"])
        #expect(json["codes"]?.number == 4)
        #expect(json["out"]?.string == out)
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(String(decoding: written, as: UTF8.self) == DemoCommand.sampleVault)
        #expect(json["bytes"]?.number == Double(written.count))
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).sorted() == ["password", "vault.json"])
    }

    @Test func aWrongPasswordExitsFourAndWritesNothing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let password = try scratch.write("password", "not the password")
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "sim:", "--password-file", password, "--out", out, "--json"])
        #expect(result.code == 4)
        #expect(try JSONShape.parse(result.out)["error"]?["kind"]?.string == "wrongPassword")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["password"])
    }

    @Test func anExistingOutputIsRefusedUnlessForced() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let password = try scratch.write("password", DemoCommand.password)
        let out = try scratch.write("vault.json", "keep me")
        let refused = await run(["import", "--camera", "sim:", "--password-file", password, "--out", out, "--json"])
        #expect(refused.code == 2)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep me")
        let forced = await run(["import", "--camera", "sim:", "--password-file", password, "--out", out, "--force", "--json"])
        #expect(forced.code == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == DemoCommand.sampleVault)
    }

    @Test func oneTrailingNewlineIsNotPartOfThePassword() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(try PasswordFile.read(scratch.write("a", "secret\n")).withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "secret")
        #expect(try PasswordFile.read(scratch.write("b", "secret\n\n")).withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "secret\n")
        #expect(try PasswordFile.read(scratch.write("c", "secret")).withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "secret")
        #expect(try PasswordFile.read(scratch.write("d", "secret\r\n")).withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "secret")
    }
}

import Capture
import Flows
import MediaSupport

/// `hwprobe import --camera file:` on a generated video: a fresh VB1 backup's codes drawn by
/// Debian's qrencode, shown in a shuffled order with repeats, a stray non-backup code and blank frames.
@Suite struct ImportFromVideoTests {
    static let password = "video test password"
    static let plaintext = Array(#"{"items":[{"issuer":"Video","account":"bench@example.org","secret":"GEZDGNBVGY3TQOJQ"}]}"#.utf8)

    static func makeVideo(at path: String) throws {
        let container = try VB1Container.write(plaintext: plaintext, password: password, parameters: ScryptParameters(logN: 12, r: 8, p: 1))
        let codes = try VB1Code.split(container: container.bytes, into: 3).map(\.text)
        let shown = [codes[1], codes[1], "https://example.com/menu", codes[2], codes[1], codes[0], codes[2]]
        let writer = try Y4MWriter(path: path, width: 320, height: 240, frameRateNumerator: 10, frameRateDenominator: 1)
        var sequence: UInt64 = 0
        for text in shown {
            try writer.write(QRFixture.blank(sequence: sequence))
            sequence += 1
            for _ in 0..<2 {
                try writer.write(QRFixture.frame(text, sequence: sequence))
                sequence += 1
            }
        }
        writer.close()
    }

    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    /// Issue 27, item 5: `--anonymize` on an import's cassette replaces the video's path and
    /// says plainly that the frames (the backup's codes) are left as they were.
    @Test func anAnonymizedImportCassetteHidesThePathAndWarnsAboutTheFrames() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let video = scratch.path("alice-vault-backup.y4m")
        try Self.makeVideo(at: video)
        let password = try scratch.write("password", Self.password + "\n")
        let cassette = scratch.path("import.cassette")
        let result = await run(["import", "--camera", "file:\(video)?pace=max", "--password-file", password, "--out", scratch.path("vault.json"),
                                "--record", cassette, "--anonymize", "--json"])
        #expect(result.code == 0, "\(result.err.suffix(400))")
        #expect(result.err.contains("--anonymize left the camera's frames as they were"), "\(result.err)")
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains("alice"), "\(text.prefix(600))")
        #expect(text.contains("camera-1.y4m"), "\(text.prefix(600))")
        #expect(text.contains("# the camera frames are not anonymized"))
    }

    @Test func theRightPasswordGetsThePlaintextOutOfTheVideo() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let video = scratch.path("codes.y4m")
        try Self.makeVideo(at: video)
        let password = try scratch.write("password", Self.password + "\n")
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "file:\(video)?pace=max", "--password-file", password, "--out", out, "--json"])
        #expect(result.code == 0, "\(result.err.suffix(400))")
        let json = try JSONShape.parse(result.out)
        #expect(json["codes"]?.number == 3)
        #expect(json["bytes"]?.number == Double(Self.plaintext.count))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out))) == Self.plaintext)
        #expect(try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int == 0o600)
    }

    /// `-v` says what the camera's decoding cost: every frame up to the one that completed the
    /// set was decoded (a file at full pace skips none), and the latency percentiles.
    @Test func verboseImportSaysWhatDecodingTheCameraCost() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let video = scratch.path("codes.y4m")
        try Self.makeVideo(at: video)
        let password = try scratch.write("password", Self.password + "\n")
        let out = scratch.path("vault.json")
        let result = await run(["import", "-v", "--camera", "file:\(video)?pace=max", "--password-file", password, "--out", out, "--json"])
        #expect(result.code == 0, "\(result.err.suffix(400))")
        let line = try #require(result.err.split(separator: "\n").first { $0.hasPrefix("camera file:") })
        // Each shown code is a blank frame and two of the code; the 17th frame, the first of the
        // last missing code, completes the set (the stray code's frames have symbols too).
        let decoded = try #require(line.firstMatch(of: /: (\d+) frames decoded, (\d+) with codes, 0 skipped/))
        #expect((17...18).contains(Int(decoded.1) ?? 0), "\(line)")
        #expect((11...12).contains(Int(decoded.2) ?? 0), "\(line)")
        #expect(line.contains("(\(CodeDecoders.defaultName))"))
        #expect(line.contains(/decode latency p50 \d+\.\d ms, p99 \d+\.\d ms, max \d+\.\d ms(; \d+ second-lane runs, the slowest done \d+\.\d ms after its frame)?; looked at (\d+) whole, (\d+) in part, (\d+) unchanged$/))
        // Every frame the pipeline decoded is counted once by the change gate (and the frame being
        // decoded when the set completed, whose answer nobody waited for).
        let looks = try #require(line.firstMatch(of: /looked at (\d+) whole, (\d+) in part, (\d+) unchanged/))
        let counted: [Int] = [looks.1, looks.2, looks.3].map { Int($0) ?? 0 }
        let frames: Int = Int(decoded.1) ?? -1
        #expect((frames...(frames + 1)).contains(counted.reduce(0, +)), "\(line)")
        #expect(counted[0] >= 1, "the first frame is looked at whole")
    }

    @Test func aWrongPasswordExitsFourWithNoOutputFile() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let video = scratch.path("codes.y4m")
        try Self.makeVideo(at: video)
        let password = try scratch.write("password", "wrong")
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "file:\(video)?pace=max", "--password-file", password, "--out", out, "--json"])
        #expect(result.code == 4)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func aVideoThatEndsBeforeTheSetIsCompleteExitsOne() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let container = try VB1Container.write(plaintext: Self.plaintext, password: Self.password, parameters: ScryptParameters(logN: 10, r: 8, p: 1))
        let codes = try VB1Code.split(container: container.bytes, into: 3).map(\.text)
        let video = scratch.path("short.y4m")
        let writer = try Y4MWriter(path: video, width: 320, height: 240, frameRateNumerator: 10, frameRateDenominator: 1)
        try writer.write(QRFixture.frame(codes[0], sequence: 0))
        writer.close()
        let password = try scratch.write("password", Self.password)
        let result = await run(["import", "--camera", "file:\(video)?pace=max", "--password-file", password,
                                "--out", scratch.path("vault.json"), "--json"])
        #expect(result.code == 1)
        #expect(try JSONShape.parse(result.out)["error"]?["kind"]?.string == "incomplete")
    }
}

/// Interactively, a camera that stops before the set is complete keeps the codes scanned so far
/// and the scan carries on from the camera the person names next.
@Suite struct ImportResumeTests {
    static func video(_ texts: [String], at path: String) throws {
        let writer = try Y4MWriter(path: path, width: 320, height: 240, frameRateNumerator: 10, frameRateDenominator: 1)
        for (index, text) in texts.enumerated() { try writer.write(QRFixture.frame(text, sequence: UInt64(index))) }
        writer.close()
    }

    /// Runs an interactive import with a scripted person: the password typed at the prompt, and
    /// on each "camera stopped" screen the next answer (a camera's row number, or Esc).
    func run(_ arguments: [String], cameras: [String], answers: [Key]) async -> (code: Int32, out: String, err: String, asked: Int) {
        let captured = CapturedConsole()
        let remaining = Locked(answers)
        let asked = Locked(0)
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.importQuestions = ImportQuestions(isInteractive: { true }, otherCameras: { cameras })
        cli.person = { screen in
            switch screen.content {
            case .passwordField(let field) where field.status == .normal:
                return ImportFromVideoTests.password.map { Key.character($0) } + [.enter]
            case .pickList where screen.title == "The camera stopped":
                asked.withLock { $0 += 1 }
                return remaining.withLock { $0.isEmpty ? [.escape] : [$0.removeFirst()] }
            default:
                return []
            }
        }
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr, asked.withLock { $0 })
    }

    func codes() throws -> [String] {
        let container = try VB1Container.write(plaintext: ImportFromVideoTests.plaintext, password: ImportFromVideoTests.password,
                                               parameters: ScryptParameters(logN: 12, r: 8, p: 1))
        return try VB1Code.split(container: container.bytes, into: 3).map(\.text)
    }

    @Test func theScanCarriesOnFromAnotherCamera() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let codes = try codes()
        let first = scratch.path("first.y4m"), second = scratch.path("second.y4m")
        try Self.video([codes[0], codes[2]], at: first)
        try Self.video([codes[2], codes[1]], at: second)
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "file:\(first)?pace=max", "--out", out, "--no-color"],
                               cameras: ["file:/nonexistent.y4m", "file:\(second)?pace=max"], answers: [.character("2"), .character("3")])
        #expect(result.code == 0, "\(result.err.suffix(600))")
        #expect(result.out.contains("The camera stopped — 2 of 3 codes scanned; they are kept."))
        #expect(result.out.contains("hwprobe: camera /nonexistent.y4m not found"), "the missing file is reported: \(result.out)")
        #expect(result.asked == 2)  // the missing file was reported and the question asked again
        let lines = result.out.split(separator: "\n")
        let stopped = try #require(lines.firstIndex { $0.hasPrefix("The camera stopped") })
        #expect(lines[stopped - 1].hasPrefix("Camera disconnected"), "the question comes after the flow's own screens")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out))) == ImportFromVideoTests.plaintext)
    }

    @Test func leavingAtTheCameraQuestionIsCancelling() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let codes = try codes()
        let first = scratch.path("first.y4m")
        try Self.video([codes[1]], at: first)
        let out = scratch.path("vault.json")
        let result = await run(["import", "--camera", "file:\(first)?pace=max", "--out", out, "--no-color"], cameras: [], answers: [.escape])
        #expect(result.code == 130, "leaving at the camera question is leaving the flow: \(result.err)")
        #expect(result.asked == 1)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

/// The simulated camera's faults strike once, like the mirror's (issue 27, item 11).
@Suite struct SimulatedCameraFaultTests {
    /// `sim:?backup=short` stops after two codes; carrying on with it shows the rest, so the
    /// import completes instead of asking the same question for ever.
    @Test func carryingOnAfterAShortCameraCompletes() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let out = scratch.path("vault.json")
        let captured = CapturedConsole()
        let asked = Locked(0)
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        cli.importQuestions = ImportQuestions(isInteractive: { true }, otherCameras: { [] })
        cli.person = { screen in
            switch screen.content {
            case .passwordField(let field) where field.status == .normal:
                return DemoCommand.password.map { Key.character($0) } + [.enter]
            case .pickList where screen.title == "The camera stopped":
                // Carry on the first time; leave if asked again.
                return asked.withLock { $0 += 1; return $0 == 1 ? [.character("1")] : [.escape] }
            default:
                return []
            }
        }
        let code = await cli.run(["import", "--camera", "sim:?backup=short", "--out", out, "--no-color"])
        #expect(code == 0, "\(captured.stderr.suffix(600))")
        #expect(asked.withLock { $0 } == 1)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self) == DemoCommand.sampleVault)
    }

    /// The simulated camera has no frames to record: `--record` is refused before anything runs,
    /// instead of writing an empty cassette and saying nothing.
    @Test func recordingTheSimulatedCameraIsRefused() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let password = try scratch.write("password", DemoCommand.password + "\n")
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(["import", "--camera", "sim:", "--password-file", password, "--out", scratch.path("vault.json"),
                                  "--record", scratch.path("import.cassette"), "--json"])
        #expect(code == 2)
        #expect(captured.stdout.contains("the simulated camera (sim:) has none"), "\(captured.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["password"])
    }
}

/// Unattended, a camera that keeps streaming without ever showing the next code ends the run
/// after the idle limit instead of holding it forever.
@Suite struct ImportIdleLimitTests {
    @Test func aCameraThatShowsNoCodesTimesOut() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        // Ten seconds of blank frames, played at their own pace: the run must end long before.
        let video = scratch.path("blank.y4m")
        let writer = try Y4MWriter(path: video, width: 64, height: 48, frameRateNumerator: 10, frameRateDenominator: 1)
        for sequence in 0..<100 { try writer.write(QRFixture.blank(width: 64, height: 48, sequence: UInt64(sequence))) }
        writer.close()
        let password = try scratch.write("password", "x")
        let out = scratch.path("vault.json")
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty)
            .run(["import", "--camera", "file:\(video)", "--password-file", password, "--out", out, "--timeout", "0.5", "--json"])
        #expect(code == 1, "\(captured.stderr)")
        let json = try JSONShape.parse(captured.stdout)
        #expect(json["error"]?["kind"]?.string == "timedOut")
        #expect(json["error"]?["message"]?.string?.hasPrefix("no new backup code for 0.5 s (no code scanned)") == true)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func theLimitMustBeAPositiveNumber() async {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty)
            .run(["import", "--camera", "sim:", "--password-file", "/dev/null", "--out", "/nonexistent/x", "--timeout", "-3"])
        #expect(code == 2)
        #expect(captured.stderr.contains("--timeout must be a number of seconds more than 0 and at most 86400"))
    }
}
