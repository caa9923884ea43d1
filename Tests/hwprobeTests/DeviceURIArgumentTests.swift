import HAL
import Testing
@testable import hwprobe

@Suite struct DeviceURIArgumentTests {
    /// Devices typed the way people type them, per option, and the URI each one meant.
    static let typed: [(option: String, typed: String, meant: String)] = [
        ("--hci", "hci0", "hci:0"),
        ("--hci", "0", "hci:0"),
        ("--hci", "/dev/ttyACM0", "uart:/dev/ttyACM0"),
        ("--hci", "/dev/ttyUSB1", "uart:/dev/ttyUSB1"),
        ("--hci", "/dev/serial/by-id/usb-ZEPHYR_Board-if00", "uart:/dev/serial/by-id/usb-ZEPHYR_Board-if00"),
        ("--hci", "127.0.0.1:9101", "tcp:127.0.0.1:9101"),
        ("--hci", "localhost:9101", "tcp:localhost:9101"),
        ("--hci", "sim", "sim:"),
        ("--camera", "/dev/video0", "v4l2:/dev/video0"),
        ("--camera", "video2", "v4l2:/dev/video2"),
        ("--camera", "v4l:/dev/video0", "v4l2:/dev/video0"),
        ("--camera", "clip.y4m", "file:clip.y4m"),
        ("--camera", "recordings/backup.y4m", "file:recordings/backup.y4m"),
        ("--device", "/dev/hidraw3", "hidraw:/dev/hidraw3"),
        ("--device", "/dev/input/event5", "evdev:/dev/input/event5"),
        ("--device", "045e:028e", "usb:045e:028e"),
        ("--device", "045e:028e@1.2", "usb:045e:028e@1.2"),
        ("--device", "hdiraw:/dev/hidraw3", "hidraw:/dev/hidraw3"),
        ("--device", "log", "log:"),
        ("--haptics", "/dev/hidraw0", "hidraw:/dev/hidraw0"),
    ]

    @Test func typedDevicesGetTheURITheyMeant() {
        for (option, typed, meant) in Self.typed {
            #expect(DeviceURIArgument.suggestion(for: typed, family: DeviceURIArgument.family(of: option)) == meant, "\(option) \(typed)")
            // The suggestion itself is a URI of the option's kind.
            #expect((try? DeviceURI(parsing: meant)) != nil, "\(meant)")
            #expect(throws: CLIFailure(kind: .usage, message: "\(option) \(typed) is not a device URI: did you mean \(option) \(meant)?")) {
                _ = try DeviceURIArgument.parse(typed, option: option)
            }
        }
    }

    @Test func noSuggestionOfTheWrongKind() {
        // A serial port is no camera and a camera no pad: say what the option takes instead.
        #expect(DeviceURIArgument.suggestion(for: "/dev/ttyACM0", family: .camera) == nil)
        #expect(DeviceURIArgument.suggestion(for: "/dev/video0", family: .haptics) == nil)
        #expect(DeviceURIArgument.suggestion(for: "sim", family: .haptics) == nil)
        #expect(DeviceURIArgument.suggestion(for: "frobnicate", family: .hci) == nil)
        #expect(throws: CLIFailure(kind: .usage, message: "--device: bad device URI '/dev/video0': expected SCHEME:…; --device takes usb:VID:PID, "
                                   + "hidraw:/dev/hidrawN, evdev:/dev/input/eventN, log:, bell: or replay:FILE")) {
            _ = try DeviceURIArgument.parse("/dev/video0", option: "--device")
        }
    }

    @Test func goodURIsParseUnchanged() throws {
        #expect(try DeviceURIArgument.parse("uart:/dev/ttyACM0?baud=115200&rtscts=0", option: "--hci") == .uart(path: "/dev/ttyACM0", baud: 115_200, rtscts: false))
        #expect(try DeviceURIArgument.parse("sim:", option: "--camera") == .simulatedBench)
    }

    @Test func theOptionsFamiliesComeFromTheCommandTable() {
        #expect(DeviceURIArgument.family(of: "--hci") == .hci)
        #expect(DeviceURIArgument.family(of: "--camera") == .camera)
        #expect(DeviceURIArgument.family(of: "--device") == .haptics)
        #expect(DeviceURIArgument.family(of: "--haptics") == .haptics)
        // Every scheme a message or completion offers names a device of that family.
        let samples = ["hci": "hci:0", "uart": "uart:/dev/ttyACM0", "tcp": "tcp:127.0.0.1:9101", "sim": "sim:",
                       "v4l2": "v4l2:/dev/video0", "file": "file:clip.y4m", "usb": "usb:045e:028e",
                       "hidraw": "hidraw:/dev/hidraw3", "evdev": "evdev:/dev/input/event5", "log": "log:", "bell": "bell:",
                       "replay": "replay:/tmp/session.cassette"]
        for family in [DeviceURI.Family.hci, .camera, .haptics] {
            for form in DeviceURIArgument.forms(family) {
                #expect(form.example.hasPrefix(form.scheme + ":"))
                let uri = samples[form.scheme].flatMap { try? DeviceURI(parsing: $0) }
                #expect(uri?.family == family || uri?.isSimulated == true, "\(form.scheme)")
                #expect(form.takesPath == (uri.map { "\($0)".contains(":/") || form.scheme == "file" } ?? false), "\(form.scheme)")
            }
        }
    }

    /// Every command that takes a URI answers a mistyped one the same way: exit 2, the message on
    /// stderr, and with --json the contract's error object on stdout.
    @Test func everyCommandSuggests() async throws {
        let commands: [([String], String)] = [
            (["list", "--hci", "hci0"], "--hci hci0 is not a device URI: did you mean --hci hci:0?"),
            (["gatt", "--hci", "127.0.0.1:9101", "AA:BB:CC:DD:EE:FF"], "--hci 127.0.0.1:9101 is not a device URI: did you mean --hci tcp:127.0.0.1:9101?"),
            (["weigh", "--hci", "/dev/ttyACM0"], "--hci /dev/ttyACM0 is not a device URI: did you mean --hci uart:/dev/ttyACM0?"),
            (["scan", "--hci", "hci1", "--yes"], "--hci hci1 is not a device URI: did you mean --hci hci:1?"),
            (["scan", "--hci", "sim:", "--yes", "--haptics", "/dev/hidraw3"], "--haptics /dev/hidraw3 is not a device URI: did you mean --haptics hidraw:/dev/hidraw3?"),
            (["import", "--camera", "/dev/video0", "--out", "/tmp/hwprobe-never-written.json"],
             "--camera /dev/video0 is not a device URI: did you mean --camera v4l2:/dev/video0?"),
            (["haptics", "--device", "045e:028e", "--cue", "success"], "--device 045e:028e is not a device URI: did you mean --device usb:045e:028e?"),
        ]
        for (arguments, message) in commands {
            let plain = await run(arguments)
            #expect(plain.code == 2, "\(arguments)")
            #expect(plain.out.isEmpty, "\(arguments)")
            #expect(plain.err == "hwprobe \(arguments[0]): \(message)\n", "\(arguments)")
            guard Commands.spec(named: arguments[0])?.option(named: "--json") != nil else { continue }
            let json = await run(arguments + ["--json"])
            #expect(json.code == 2)
            let object = try JSONShape.parse(json.out)
            #expect(object["error"]?["kind"]?.string == "usage", "\(arguments)")
            #expect(object["error"]?["message"]?.string == message, "\(arguments)")
        }
    }

    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }
}
