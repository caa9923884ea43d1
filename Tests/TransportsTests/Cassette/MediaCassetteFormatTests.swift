import HAL
import Testing
import Transports

/// The 1.1 sections (docs/cassette-format.md, "Cameras", "Pads"): what is written reads back the
/// same, and every way a section can be wrong is refused with its line and what was expected.
@Suite struct MediaCassetteFormatTests {
    static let camera = CameraCassette(
        info: CameraInfo(uri: "v4l2:/dev/video0", card: "Integrated Camera: Integrated C", driver: "uvcvideo",
                         formats: [PixelFormatInfo(fourcc: "YUYV", sizes: [.discrete(width: 640, height: 480), .discrete(width: 320, height: 240)]),
                                   PixelFormatInfo(fourcc: "GREY", sizes: [.range(minWidth: 16, minHeight: 16, maxWidth: 1920, maxHeight: 1080)])]),
        busInfo: "usb-0000:00:14.0-8",
        frames: CameraCassette.FrameFile(name: "session.cassette.y4m", bytes: 40 + 2 * (6 + 4 * 2), width: 4, height: 2),
        times: [CameraCassette.FrameTime(at: .milliseconds(33), sequence: 1), CameraCassette.FrameTime(at: .milliseconds(100), sequence: 3)])

    static let pad = PadCassette(
        uri: "evdev:/dev/input/event5", driver: "evdev-rumble", name: "Wireless Controller", serial: "a4:ae:12:00:00:01",
        cues: [PadCassette.Cue(name: "success", at: .milliseconds(1200), commands: [
            PadCassette.TimedCommand(at: .zero, command: .indicate(IndicatorColor(red: 0, green: 0xC8, blue: 0x50))),
            PadCassette.TimedCommand(at: .microseconds(40), command: .rumble(RumbleLevel(strong: 0, weak: 115), .milliseconds(60))),
            PadCassette.TimedCommand(at: .milliseconds(260), command: .stop),
            PadCassette.TimedCommand(at: .milliseconds(260), command: .indicate(nil)),
        ])])

    func text(_ records: [String], version: String = "1.1") -> [UInt8] {
        Array((["hwprobe-cassette \(version)"] + records + ["end \(records.count)"]).joined(separator: "\n").utf8) + [0x0A]
    }

    func refusal(_ records: [String], version: String = "1.1") -> CassetteError? {
        do {
            _ = try CassetteReader.readAll(text(records, version: version))
            return nil
        } catch {
            return error
        }
    }

    @Test func camerasAndPadsReadBackTheSame() throws {
        let cassette = Cassette(cameras: [Self.camera], pads: [Self.pad])
        let written = CassetteFormat.text(of: cassette)
        let read = try CassetteReader.readAll(Array(written.utf8))
        #expect(read == cassette)
        #expect(CassetteFormat.text(of: read) == written)
        let lines = written.split(separator: "\n").map(String.init)
        #expect(lines.contains("device camera v4l2:/dev/video0"))
        #expect(lines.contains("identity uvcvideo Integrated%20Camera:%20Integrated%20C"))
        #expect(lines.contains("bus usb-0000:00:14.0-8"))
        #expect(lines.contains("format YUYV 640x480 320x240"))
        #expect(lines.contains("format GREY 16x16-1920x1080"))
        #expect(lines.contains("frames y4m session.cassette.y4m 68 4x2 2"))
        #expect(lines.contains("frame 0.100000 3"))
        #expect(lines.contains("identity evdev-rumble Wireless%20Controller"))
        #expect(lines.contains("cue 1.200000 success"))
        #expect(lines.contains("command 0.000000 light 00c850"))
        #expect(lines.contains("command 0.000040 rumble 0 115 0.060000"))
        #expect(lines.contains("command 0.260000 stop"))
        #expect(lines.contains("command 0.260000 light -"))
    }

    @Test func wordsCarryAnyTextAndComeBack() {
        for text in ["", "plain", "two words", "100%", "tab\there", "ünïcode", "a%20b"] {
            let word = CassetteFormat.word(text)
            #expect(!word.contains(" ") && !word.isEmpty)
            #expect(CassetteFormat.unword(word) == text)
        }
        #expect(CassetteFormat.unword("bad%2") == nil)
        #expect(CassetteFormat.unword("bad%zz") == nil)
    }

    /// A 1.0 reader skipped what 1.1 added; this reader skips what a later 1.x adds, and a BLE
    /// session in a file with cameras and pads reads as before.
    @Test func newerMinorVersionsAreSkippedAndOlderOnesRefuseCameras() throws {
        let newer = try CassetteReader.readAll(text(["device pad log:", "identity log log:", "sparkle 1", "cue 0.000000 success",
                                                     "device hologram x", "anything at all"], version: "1.4"))
        #expect(newer.pads.count == 1 && newer.pads[0].cues.count == 1)
        #expect(refusal(["device camera v4l2:/dev/video0", "identity vivid vivid"], version: "1.0")
                == .damaged(line: 2, expected: "a device kind format 1.0 knows (ble)", found: "device camera v4l2:/dev/video0"))
        #expect(refusal(["device pad log:", "identity log log:", "sparkle 1"])
                == .damaged(line: 4, expected: "a pad record (identity, serial, cue, command)", found: "sparkle 1"))
    }

    @Test func damagedCameraSectionsAreRefusedWithTheLine() {
        let head = ["device camera v4l2:/dev/video0", "identity vivid vivid-000"]
        #expect(refusal(["device camera v4l2:/dev/video0", "bus x"])
                == .damaged(line: 3, expected: "`identity DRIVER NAME` first in a camera section", found: "bus x"))
        #expect(refusal(["device camera v4l2:/dev/video0"])
                == .damaged(line: 3, expected: "an `identity` record in the section of v4l2:/dev/video0 (from line 2)", found: "none"))
        // The frame file is beside the cassette, never elsewhere.
        #expect(refusal(head + ["frames y4m ../../etc/passwd 100 4x2 1", "frame 0.000000 0"])?.description
                .contains("NAME a file beside the cassette") == true)
        // Fewer frame lines than promised: a file cut or edited.
        #expect(refusal(head + ["frames y4m f.y4m 100 4x2 3", "frame 0.000000 0", "frame 0.033000 1"])
                == .damaged(line: 7, expected: "3 `frame` records for v4l2:/dev/video0, as its `frames` line says", found: "2"))
        #expect(refusal(head + ["frames y4m f.y4m 100 4x2 1", "frame 0.000000 0", "frame 0.033000 1"])
                == .tooMany(line: 6, what: "`frame` records (the `frames` line says 1)", limit: 1))
        #expect(refusal(head + ["frames y4m f.y4m 100 4x2 2", "frame 0.040000 5", "frame 0.033000 6"])?.description
                .contains("frames in order") == true)
        // BYTES too small for COUNT frames of that size is damage, not a promise to trust.
        #expect(refusal(head + ["frames y4m f.y4m 10 640x480 2", "frame 0.000000 0", "frame 0.033000 1"])?.description
                .contains("at least 614412 bytes for 2 frames of 640x480") == true)
        #expect(refusal(head + ["frames y4m f.y4m 2000000000 640x480 1", "frame 0.000000 0"])?.description
                .contains("BYTES at most 1073741824") == true)
        #expect(refusal(head + ["format GREY 0x480"])?.description.contains("a size WIDTHxHEIGHT") == true)
        #expect(refusal(head + ["frame 0.000000 0"])
                == .damaged(line: 4, expected: "a `frames` record before the camera's `frame` records", found: "frame 0.000000 0"))
        #expect(refusal(head + ["device camera v4l2:/dev/video0", "identity vivid vivid-000"])?.description.contains("each device once") == true)
    }

    @Test func damagedPadSectionsAreRefusedWithTheLine() {
        let head = ["device pad evdev:/dev/input/event0", "identity evdev-rumble pad"]
        #expect(refusal(head + ["cue 0.000000 thud"])?.description.contains("a cue hwprobe plays (lightImpact") == true)
        #expect(refusal(head + ["command 0.000000 stop"])
                == .damaged(line: 4, expected: "a `cue` record before its `command` records", found: "command 0.000000 stop"))
        for bad in ["command 0.000000 rumble 256 0 0.010000", "command 0.000000 rumble 01 0 0.010000", "command 0.000000 light 00C850",
                    "command 0.000000 light 00c8", "command 0.000000 buzz", "command 0.0 stop"] {
            #expect(refusal(head + ["cue 0.000000 success", bad])?.description.contains("`command SECONDS rumble STRONG WEAK SECONDS`") == true, "\(bad)")
        }
        #expect(refusal(head + ["cue 0.000000 success", "command 0.100000 stop", "command 0.050000 stop"])?.description
                .contains("a cue's commands in time order") == true)
        #expect(refusal(head + ["cue 1.000000 success", "cue 0.500000 error"])?.description.contains("cues in time order") == true)
        #expect(refusal(head + ["serial a", "serial b"]) == .damaged(line: 5, expected: "one `serial TEXT`", found: "serial b"))
    }

    /// What the replay says when the cue changed: which cue and command, expected and seen, offset.
    @Test func differencesNameTheCommandTheExpectedAndTheSeen() {
        let want = Self.pad
        #expect(want.differences(seen: want.cues).isEmpty)
        var late = want.cues
        late[0].commands[2].at += .microseconds(4900)
        #expect(want.differences(seen: late).isEmpty, "4.9 ms is within the 5 ms")
        late[0].commands[2].at += .microseconds(200)
        #expect(want.differences(seen: late) == ["cue 1 (success), command 3: stop expected at 0.260000 s, seen at 0.265100 s (5.1 ms off, more than 5 ms)"])
        #expect(want.differences(seen: late, tolerance: nil).isEmpty, "timing ignored")
        var other = want.cues
        other[0].commands[1].command = .rumble(RumbleLevel(strong: 0, weak: 100), .milliseconds(60))
        #expect(want.differences(seen: other) == ["cue 1 (success), command 2: expected rumble strong 0 weak 115 for 60 ms at 0.000040 s, "
                                                  + "saw rumble strong 0 weak 100 for 60 ms at 0.000040 s"])
        var short = want.cues
        short[0].commands.removeLast()
        #expect(want.differences(seen: short) == ["cue 1 (success), command 4: expected light back to rest at 0.260000 s, but the cue sent nothing more"])
        #expect(want.differences(seen: []) == ["cue 1: expected success, but no more cues were played (0 of 1)"])
        #expect(want.differences(seen: want.cues + want.cues) == ["cue 2: success was played, but the recording has only 1 cues"])
    }

    /// `--anonymize`: bus info and pad serials replaced the same way each time; a pad's address
    /// that is also a peripheral's gets that peripheral's replacement.
    @Test func anonymizingReplacesBusInfoAndPadSerialsConsistently() throws {
        let peripheral = try #require(BLEAddress(string: "A4:AE:12:00:00:01"))
        var second = Self.camera
        second.info.uri = "v4l2:/dev/video2"
        var other = Self.pad
        other.uri = "hidraw:/dev/hidraw0"
        other.serial = "SN-7731-A"
        let cassette = Cassette(ble: BLECassette(peripherals: [BLECassette.Peripheral(address: peripheral)]),
                                cameras: [Self.camera, second], pads: [Self.pad, other])
        let anonymized = CassetteAnonymizer.anonymize(cassette)
        #expect(anonymized.cameras.map(\.busInfo) == ["bus-1", "bus-1"], "the same bus the same way")
        #expect(anonymized.cameras.map(\.info.card) == [Self.camera.info.card, Self.camera.info.card], "a model name stays")
        let replaced = try #require(anonymized.ble.peripherals.first?.address)
        #expect(replaced != peripheral)
        #expect(anonymized.pads.first { $0.uri == Self.pad.uri }?.serial == replaced.description.lowercased())
        #expect(anonymized.pads.first { $0.uri == other.uri }?.serial == "000000001")
        #expect(!CassetteFormat.text(of: anonymized).contains("usb-0000"))
        #expect(CassetteAnonymizer.anonymize(cassette) == anonymized, "deterministic")
    }
}
