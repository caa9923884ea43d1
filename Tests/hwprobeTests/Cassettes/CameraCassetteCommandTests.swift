import Capture
import Foundation
import HAL
import Testing
import Transports
@testable import hwprobe

/// `import --record` and `--camera replay:` (docs/cli.md, "Cassettes"): a backup imported
/// from a video, recorded, then imported again from the cassette alone gives the same result,
/// with the camera reported as it was recorded.
@Suite struct CameraCassetteCommandTests {
    /// Real time by default: a replay hands over frames at their recorded times and, like a live
    /// camera, keeps only the newest for a decoder that falls behind, so a faster bench could
    /// make a busy machine's decoder miss a code the recording decoded.
    func run(_ arguments: [String], speed: Double = 1) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: speed))
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    struct Session {
        var directory: String
        var cassette: String
        var video: String
        var password: String
        var live: (code: Int32, out: String, err: String)
    }

    func recordSession() async throws -> Session {
        let scratch = try ImportCommandTests.Scratch()
        let video = scratch.path("codes.y4m")
        try ImportFromVideoTests.makeVideo(at: video)
        let password = try scratch.write("password", ImportFromVideoTests.password + "\n")
        let cassette = scratch.path("camera.cassette")
        let live = await run(["import", "--camera", "file:\(video)?pace=max", "--password-file", password,
                              "--out", scratch.path("live.json"), "--json", "--record", cassette])
        return Session(directory: scratch.directory.path, cassette: cassette, video: video, password: password, live: live)
    }

    @Test func aRecordedImportReplaysToTheSameResult() async throws {
        let session = try await recordSession()
        defer { try? FileManager.default.removeItem(atPath: session.directory) }
        #expect(session.live.code == 0, "\(session.live.err.suffix(400))")
        let text = try String(contentsOfFile: session.cassette, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "hwprobe-cassette 1.1")
        #expect(lines.contains("device camera file:\(session.video)?pace=max"), "\(text.prefix(400))")
        #expect(lines.contains("identity file codes.y4m"))
        #expect(lines.contains("format GREY 320x240"))
        // The frames the pipeline took: at full pace, every one up to the one that completed the set.
        let framesLine = try #require(lines.first { $0.hasPrefix("frames y4m ") })
        let words = framesLine.split(separator: " ")
        #expect(words[2] == "camera.cassette.y4m" && words[4] == "320x240")
        let frameCount = try #require(Int(words[5]))
        #expect(frameCount >= 15 && frameCount <= 21, "\(framesLine)")
        #expect(lines.filter { $0.hasPrefix("frame ") }.count == frameCount)
        let companion = session.cassette + ".y4m"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: companion)[.size] as? Int)
        #expect(String(size) == words[3], "the companion's size is the one the cassette says")
        let header = Y4MHeader(width: 320, height: 240, colorSpace: .mono).line.utf8.count + 1
        #expect(size == header + frameCount * (6 + 320 * 240), "a mono Y4M: its header, then FRAME and the Y plane of each")
        #expect(try FileManager.default.attributesOfItem(atPath: companion)[.posixPermissions] as? Int == 0o600)

        // The same result, from the cassette alone (the video is gone).
        try FileManager.default.removeItem(atPath: session.video)
        let replay = await run(["import", "-v", "--camera", "replay:\(session.cassette)", "--password-file", session.password,
                                "--out", session.directory + "/replayed.json", "--json"])
        #expect(replay.code == 0, "\(replay.err.suffix(400))")
        var live = try #require(CassetteCLI.withoutTimings(session.live.out) as? [String: Any])
        var replayed = try #require(CassetteCLI.withoutTimings(replay.out) as? [String: Any])
        live["out"] = nil
        replayed["out"] = nil
        #expect(NSDictionary(dictionary: live) == NSDictionary(dictionary: replayed), "\(session.live.out) vs \(replay.out)")
        // The camera is the one recorded, by its recorded name.
        #expect(replay.err.contains("camera file:\(session.video)?pace=max ("), "\(replay.err.prefix(400))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: session.directory + "/replayed.json"))
                == Data(contentsOf: URL(fileURLWithPath: session.directory + "/live.json")))
    }

    @Test func frameFilesThatDoNotBelongAreRefused() async throws {
        let session = try await recordSession()
        defer { try? FileManager.default.removeItem(atPath: session.directory) }
        #expect(session.live.code == 0, "\(session.live.err.suffix(400))")
        let companion = session.cassette + ".y4m"
        // Cut short by a copy: the size no longer matches the cassette's.
        let handle = try #require(FileHandle(forUpdatingAtPath: companion))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 100)
        try handle.close()
        let cut = await run(["import", "--camera", "replay:\(session.cassette)", "--password-file", session.password,
                             "--out", session.directory + "/x.json", "--json"])
        #expect(cut.code == 3)
        #expect(cut.err.contains("the frames do not belong to this cassette or were cut short"), "\(cut.err)")
        try FileManager.default.removeItem(atPath: companion)
        let missing = await run(["import", "--camera", "replay:\(session.cassette)", "--password-file", session.password,
                                 "--out", session.directory + "/x.json", "--json"])
        #expect(missing.code == 3)
        #expect(missing.err.contains("was it copied without them?"), "\(missing.err)")
    }

    @Test func anExistingFramesFileIsRefusedBeforeTheCameraOpens() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let cassette = scratch.path("camera.cassette")
        _ = try scratch.write("camera.cassette.y4m", "someone's file")
        let password = try scratch.write("password", "x\n")
        let result = await run(["import", "--camera", "file:/nonexistent.y4m", "--password-file", password,
                                "--out", scratch.path("out.json"), "--record", cassette])
        #expect(result.code == 2)
        #expect(result.err.contains("camera.cassette.y4m exists"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: cassette))
    }

    /// The committed fixture recorded in the bench VM from vivid's HDMI loop showing a backup's
    /// codes (`scripts/test-vm v4l2`): played here, with no camera, as that camera, it imports the
    /// same backup to the same plaintext (Tests/BenchVM/Fixtures: the bench VM's password and plaintext).
    @Test func theBenchVMVividCassetteImportsTheSameBackup() async throws {
        let path = CassetteCLI.fixtures + "/vm-vivid-import.cassette"
        let cassette = try CassetteReader.readAll(path: path)
        let camera = try #require(cassette.cameras.first)
        #expect(camera.info.uri == "v4l2:/dev/video0" && camera.info.driver == "vivid" && camera.busInfo == "platform:vivid-000")
        #expect(camera.info.formats.count == 83, "vivid's formats as it listed them")
        #expect(camera.times.count == 6)
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let password = try scratch.write("password", "bench vm password")
        let out = scratch.path("vault.json")
        let replay = await run(["import", "-v", "--camera", "replay:\(path)", "--password-file", password, "--out", out, "--json"], speed: 1)
        #expect(replay.code == 0, "\(replay.err.suffix(400))")
        var replayed = try #require(CassetteCLI.withoutTimings(replay.out) as? [String: Any])
        replayed["out"] = nil
        let recorded = try #require(CassetteCLI.withoutTimings(try String(contentsOfFile: CassetteCLI.fixtures + "/vm-vivid-import.json", encoding: .utf8)))
        #expect(NSDictionary(dictionary: replayed) == recorded, "\(replay.out)")
        #expect(replay.err.contains("camera v4l2:/dev/video0 ("), "reported as the camera recorded: \(replay.err.prefix(300))")
        let plaintext = #"{"items":[{"issuer":"BenchVM","account":"vivid@example.org","secret":"JBSWY3DPEHPK3PXP"}]}"#
        #expect(try String(contentsOfFile: out, encoding: .utf8) == plaintext)
    }
}
