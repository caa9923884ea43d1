import HAL

/// The contract's subcommands (docs/cli.md, "Synopsis" and "Commands"). This table is the
/// one description of the command line: the parser, `--help`, `hwprobe help`, the shell
/// completions and the man page are all made from it.
enum Commands {
    static let json = OptionSpec(name: "--json", help: "print exactly one JSON object on stdout")
    static let hci = OptionSpec(name: "--hci", valueName: "URI", help: "HCI controller: hci:N, uart:/dev/ttyX?baud=…&rtscts=…, tcp:HOST:PORT, sim: or replay:FILE (a cassette)",
                                value: .deviceURI(.hci))
    static let haptics = OptionSpec(name: "--haptics", valueName: "URI", help: "play the flow's cues on a pad (usb:, hidraw:, evdev:) or on log: / bell:",
                                    value: .deviceURI(.haptics))
    /// One test case per run for CI servers (`check` writes one per check).
    static let report = OptionSpec(name: "--report", valueName: "junit:FILE|tap:FILE", repeatable: true,
                                   help: "also write the run's result as JUnit XML or TAP 13 to FILE (repeatable)", value: .file)
    static let shells = ["bash", "zsh", "fish"]
    /// The bench S400's bind key (a demonstration, like the bench backup's password).
    static let benchBindKey = SimulatedBench.s400BindKey
    /// Cassettes (docs/cli.md, "Cassettes"): on every command that opens a BLE controller.
    static let record = OptionSpec(name: "--record", valueName: "FILE",
                                   help: "make a cassette of the session in FILE (mode 0600, a new file): BLE, camera frames (beside it in FILE.y4m) and pad commands, to play back with replay:FILE",
                                   value: .file)
    static let anonymize = OptionSpec(name: "--anonymize",
                                      help: "with --record: replace addresses, names and serial numbers in the cassette (the same one the same way), to share it")
    /// Scales that encrypt their advertisements (Xiaomi's S400): docs/cli.md, "Bind keys".
    static let bindKey = OptionSpec(name: "--bind-key", valueName: "KEY", repeatable: true,
                                    help: "read a scale that encrypts its advertisements (Xiaomi S400) with its 16-byte bind key: KEY is 32 hex digits, "
                                        + "or ADDRESS=HEX for one scale (repeatable); never printed")
    static let saveKey = OptionSpec(name: "--save-key",
                                    help: "keep the --bind-key that read the scale, for its address, so later runs read it without one")

    /// Pairing in the commands that talk to a device (docs/cli.md §12): `gatt`, `weigh`, `scan`, `check`.
    static let pairing = [OptionSpec(name: "--pair", help: "pair (or encrypt with the device's bond) before anything else; without it, "
                                         + "hwprobe pairs when the device refuses a request with 0x05 or 0x0F, then repeats the request"),
                          OptionSpec(name: "--io", valueName: "CAPABILITY",
                                     help: "what hwprobe can show and type when pairing (default: keyboard-display at a terminal, none otherwise)",
                                     value: .choice(["display", "display-yes-no", "keyboard", "keyboard-display", "none"])),
                          OptionSpec(name: "--passkey", valueName: "N", help: "the six-digit passkey to type (or show) when pairing")]
    static let pairingSynopsis = "[--pair] [--io CAPABILITY] [--passkey N]"

    static let all: [CommandSpec] = [
        CommandSpec(name: "list", synopsis: "hwprobe [list] [--hci URI]... [--scan-seconds S] [--bind-key KEY]... [--record FILE [--anonymize]] [--json]",
                    summary: "List HCI controllers, cameras, haptic devices and serial ports, and scan for BLE peripherals on each --hci.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", repeatable: true, help: hci.help, value: hci.value),
                              OptionSpec(name: "--scan-seconds", valueName: "S", help: "how long to scan for peripherals (default 3)"),
                              bindKey, record, anonymize, json],
                    examples: [
                        Example(line: "hwprobe list", what: "controllers, cameras, pads and serial ports; what cannot be seen is listed under problems"),
                        Example(line: "hwprobe list --hci sim: --json", what: "plus a BLE scan of the simulated bench with the driver claiming each peripheral, as JSON"),
                        Example(line: "hwprobe list --hci tcp:127.0.0.1:9101 --scan-seconds 2", what: "scan for two seconds through a virtual controller"),
                    ]),
        CommandSpec(name: "gatt", synopsis: "hwprobe gatt --hci URI ADDRESS [--read ID|all]... [--write ID=HEX]... [--write-command ID=HEX]... "
                        + "[--subscribe ID [--count N] [--seconds S]] \(pairingSynopsis) [--record FILE [--anonymize]] [--json]",
                    summary: "Connect to a peripheral and dump its whole GATT database, with names; read, write and subscribe. "
                        + "ID is a characteristic UUID (2A9D or 128-bit; its first occurrence) or a value handle (22 or 0x0016). "
                        + "Reads come first, then writes in the order given, then the subscription; "
                        + "an ATT error is reported with its code and name (exit 1).",
                    options: [hci,
                              OptionSpec(name: "--read", valueName: "ID|all", repeatable: true,
                                         help: "read a characteristic (its value is shown as hex); all: every readable one, a refused read noted"),
                              OptionSpec(name: "--write", valueName: "ID=HEX", repeatable: true,
                                         help: "write HEX (e.g. 0100 or 01:00) with a Write Request, which the device answers"),
                              OptionSpec(name: "--write-command", valueName: "ID=HEX", repeatable: true,
                                         help: "send HEX as a Write Command (no answer), to a characteristic that takes them"),
                              OptionSpec(name: "--subscribe", valueName: "ID",
                                         help: "turn notifications (or indications) on and print each value: SECONDS  HANDLE  HEX"),
                              OptionSpec(name: "--count", valueName: "N", help: "stop the subscription after N values"),
                              OptionSpec(name: "--seconds", valueName: "S",
                                         help: "stop the subscription after S seconds (with --json and neither limit: 10); Ctrl-C stops it too"),
                              record, anonymize, json] + pairing,
                    positionals: [PositionalSpec(name: "ADDRESS", help: "AA:BB:CC:DD:EE:FF, optionally /public or /random")],
                    requiredPositionals: 1, required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe gatt --hci tcp:127.0.0.1:9101 C0:FF:EE:00:4F:2A", what: "the address type is the one the peripheral advertises with"),
                        Example(line: "hwprobe gatt --hci tcp:127.0.0.1:9101 C0:FF:EE:00:4F:2A --read all --json",
                                what: "the database with every readable value, as JSON"),
                        Example(line: "hwprobe gatt --hci hci:0 C0:FF:EE:00:4F:2A --read 2A19 --write 7B9E0008-3C2A-4F1B-9E6D-5A4C3B2A1F00=03",
                                what: "read the battery level, then send the mirror's control point abort (03)"),
                        Example(line: "hwprobe gatt --hci hci:0 C0:FF:EE:00:4F:2A --subscribe 7B9E0006-3C2A-4F1B-9E6D-5A4C3B2A1F00 --seconds 30",
                                what: "print the mirror's scale notifications for 30 seconds (or until Ctrl-C)"),
                        Example(line: "hwprobe gatt --hci uart:/dev/ttyACM0 C0:FF:EE:00:4F:2A/random --json --btsnoop /tmp/gatt.btsnoop",
                                what: "through a Zephyr hci_uart board, as JSON, with the HCI traffic kept for Wireshark"),
                    ]),
        CommandSpec(name: "watch", synopsis: "hwprobe watch [--hci URI]... [--seconds S] [--bind-key KEY]... [--record FILE [--anonymize]] [--json]",
                    summary: "Report what appears and disappears while it runs: controllers, cameras, pads and serial ports from the "
                        + "kernel's hotplug events, peripherals from advertisements on each --hci (removed after 10 s unheard).",
                    options: [OptionSpec(name: "--hci", valueName: "URI", repeatable: true, help: hci.help, value: hci.value),
                              OptionSpec(name: "--seconds", valueName: "S", help: "stop after S seconds (default: at Ctrl-C)"),
                              bindKey, record, anonymize,
                              OptionSpec(name: "--json", help: "one JSON object per line: {\"event\", \"section\", \"device\", \"t\"}")],
                    examples: [
                        Example(line: "hwprobe watch --json", what: "hotplug of cameras, pads, controllers and serial ports as JSON lines"),
                        Example(line: "hwprobe watch --hci sim: --seconds 15", what: "the bench's peripherals appearing"),
                    ]),
        CommandSpec(name: "check", synopsis: "hwprobe check --hci URI [ADDRESS] [--profile mirror-v1|wss|bcs] \(pairingSynopsis) [--record FILE [--anonymize]] [--report junit:FILE|tap:FILE]... [--json]",
                    summary: "Run a profile's conformance checks against one peripheral: each requirement a client can observe, "
                        + "passed, failed with what was expected and what was seen, or skipped. Exit 1 when a check failed.",
                    options: [hci, OptionSpec(name: "--profile", valueName: "NAME", help: "the profile to check (default: that of the driver claiming the device)",
                                              value: .choice(["mirror-v1", "wss", "bcs"])),
                              record, anonymize, report, json] + pairing,
                    positionals: [PositionalSpec(name: "ADDRESS", help: "the peripheral (default: the first one a profile is known for)")],
                    required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe check --hci sim:", what: "the bench's mirror against mirror-v1"),
                        Example(line: "hwprobe check --hci hci:0 C0:FF:EE:00:4F:2A --report junit:results/mirror.xml",
                                what: "a mirror build on the bench, with a JUnit report for CI"),
                    ]),
        CommandSpec(name: "weigh", synopsis: "hwprobe weigh --hci URI [ADDRESS] [--timeout S] [--bind-key KEY [--save-key]]... \(pairingSynopsis) [--record FILE [--anonymize]] [--report junit:FILE|tap:FILE]... [--json]",
                    summary: "Read one stable weight from a scale (connected or broadcasting); the first found without ADDRESS. "
                        + "The scale must be seen within 10 s (or --timeout, if shorter): otherwise it is not found (exit 3). "
                        + "A scale that encrypts its advertisements (Xiaomi S400) needs its bind key: without one exit 2, "
                        + "with a wrong one exit 1 (\"the bind key does not decrypt this scale's advertisements\"). "
                        + "The bench's S400 (sim:?scale=mi-s400) has the demo bind key \(benchBindKey).",
                    options: [hci, OptionSpec(name: "--timeout", valueName: "S",
                                              help: "give up after S seconds in all (default 30); finding the scale may take 10 of them"),
                              bindKey, saveKey, record, anonymize, report, json] + pairing,
                    positionals: [PositionalSpec(name: "ADDRESS", help: "the scale to use (optional)")], required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe weigh --hci sim:", what: "the simulated bench's scale"),
                        Example(line: "hwprobe weigh --hci sim:?scale=qn-scale",
                                what: "the bench's scale as a QN / Yolanda scale (scale= takes any scale driver's id, weight=KG the weight)"),
                        Example(line: "hwprobe weigh --hci sim:?scale=mi-s400 --bind-key \(benchBindKey)",
                                what: "the bench's scale as a Xiaomi S400, its encrypted advertisements read with the demo bind key"),
                        Example(line: "hwprobe weigh --hci hci:0 D4:12:3A:00:18:1D --bind-key D4:12:3A:00:18:1D=\(benchBindKey) --save-key",
                                what: "read an S400 with its key and keep the key for it: later runs need no --bind-key"),
                        Example(line: "hwprobe weigh --hci hci:0 --timeout 60 --json", what: "the first scale the kernel's hci0 hears, waiting up to a minute"),
                        Example(line: "hwprobe weigh --hci hci:0 --record scale.cassette", what: "weigh, and keep the session as a cassette"),
                        Example(line: "hwprobe weigh --hci replay:scale.cassette --json", what: "the same scale again, played from the cassette with no hardware"),
                    ]),
        CommandSpec(name: "scan", synopsis: "hwprobe scan --hci URI [--mirror ADDRESS] [--height-cm N] [--yes] [--haptics URI] \(pairingSynopsis) [--record FILE [--anonymize]] [--report junit:FILE|tap:FILE]... [--json]",
                    summary: "Run the body-scan flow against a mirror.",
                    options: [hci, OptionSpec(name: "--mirror", valueName: "ADDRESS", help: "the mirror to use"),
                              OptionSpec(name: "--height-cm", valueName: "N", help: "the person's height (default 170)"),
                              OptionSpec(name: "--yes", help: "answer the flow's questions (pick the nearest mirror, confirm alignment)"),
                              haptics, record, anonymize, report, json] + pairing,
                    required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe scan --hci sim: --yes --json", what: "a whole unattended scan on the simulated bench, as the contract's JSON object"),
                        Example(line: "hwprobe scan --hci hci:0 --mirror E1:5C:3B:4F:2A:01 --height-cm 182 --haptics usb:045e:028e",
                                what: "one mirror on a real controller, with the cues on an Xbox 360 pad"),
                    ]),
        CommandSpec(name: "import", synopsis: "hwprobe import --camera URI [--password-file FILE] --out FILE [--force] [--timeout S] [--allow-slow-kdf] [--no-preview] [--haptics URI] [--record FILE [--anonymize]] [--report junit:FILE|tap:FILE]... [--json]",
                    summary: "Scan a VB1 backup's codes from a camera, decrypt it and write the plaintext (mode 0600).",
                    options: [OptionSpec(name: "--camera", valueName: "URI", help: "v4l2:/dev/videoN, file:PATH[?pace=max], sim: (the bench's backup; its password is \"\(DemoCommand.password)\") or replay:FILE (a cassette's camera)", value: .deviceURI(.camera)),
                              OptionSpec(name: "--password-file", valueName: "FILE", help: "read the password from FILE instead of asking", value: .file),
                              OptionSpec(name: "--out", valueName: "FILE", help: "where to write the plaintext", value: .file),
                              OptionSpec(name: "--force", help: "replace an existing --out (only on success)"),
                              OptionSpec(name: "--timeout", valueName: "S", help: "give up when no new code arrives for S seconds (default 120 when unattended)"),
                              OptionSpec(name: "--allow-slow-kdf", help: "derive the key even when that would take more than 30 s here (asked at a terminal, else refused)"),
                              OptionSpec(name: "--no-preview", help: "do not draw the camera's view beside the screen (it is drawn only on a terminal, from idle CPU time)"),
                              haptics, record, anonymize, report, json],
                    required: ["--camera", "--out"],
                    examples: [
                        Example(line: "hwprobe import --camera v4l2:/dev/video0 --out vault.json --haptics hidraw:/dev/hidraw3",
                                what: "asks for the password; the cues play on a DualShock 4"),
                        Example(line: "hwprobe import --camera file:backup.y4m --password-file password.txt --out vault.json --json",
                                what: "unattended, from a recorded video"),
                        Example(line: "hwprobe import --camera v4l2:/dev/video0 --out vault.json --record camera.cassette",
                                what: "keep the camera's identity and the frames it gave as a cassette (camera.cassette and camera.cassette.y4m)"),
                        Example(line: "hwprobe import --camera replay:camera.cassette --password-file password.txt --out vault.json",
                                what: "the same frames again, as that camera, with no hardware"),
                        Example(line: "hwprobe import --camera sim: --out /tmp/vault.json",
                                what: "the simulated bench's backup; type the password \"\(DemoCommand.password)\" when asked"),
                    ]),
        CommandSpec(name: "haptics", synopsis: "hwprobe haptics --device URI --cue NAME [--detach-kernel-driver] [--record FILE [--anonymize]] [--report junit:FILE|tap:FILE]...",
                    summary: "Play one cue: " + HapticCue.allCases.map(\.rawValue).joined(separator: ", ") + ".",
                    options: [OptionSpec(name: "--device", valueName: "URI", help: "usb:VID:PID, hidraw:PATH, evdev:PATH, log:, bell: or replay:FILE (check the cue against a cassette)", value: .deviceURI(.haptics)),
                              OptionSpec(name: "--cue", valueName: "NAME", help: "the cue to play", value: .choice(HapticCue.allCases.map(\.rawValue))),
                              OptionSpec(name: "--detach-kernel-driver", help: "take a USB pad from the kernel driver holding it (xpad) while it plays"), record, anonymize, report],
                    required: ["--device", "--cue"],
                    examples: [
                        Example(line: "hwprobe haptics --device log: --cue success", what: "print each timed command a pad would get"),
                        Example(line: "hwprobe haptics --device evdev:/dev/input/event5 --cue error", what: "any force-feedback pad"),
                        Example(line: "hwprobe haptics --device usb:045e:028e --cue warning --detach-kernel-driver", what: "an Xbox 360 pad that xpad holds"),
                        Example(line: "hwprobe haptics --device evdev:/dev/input/event5 --cue success --record pad.cassette",
                                what: "play, and keep the pad's identity and every timed command as a cassette"),
                        Example(line: "hwprobe haptics --device replay:pad.cassette --cue success",
                                what: "play nothing: check the cue still sends those commands at those offsets (within 5 ms), exit 1 with the difference if not"),
                    ]),
        CommandSpec(name: "serve", synopsis: "hwprobe serve --hci URI DEVICE [--name NAME] [--seconds S] [--pairing off|optional|required [--privacy]] [--io CAPABILITY] [--passkey N] [--record FILE] [--json]",
                    summary: "Be the device: advertise DEVICE on the controller and answer as its GATT server, so that an app, a phone "
                        + "or another host can connect to it as to the real one. DEVICE is mirror-v1[?fault=…&deviation=…] (the bench's "
                        + "mirror), standard-scale[?weight=KG], replay:FILE[?address=ADDR] (a cassette's device, answering as recorded) "
                        + "or profile:FILE (docs/serve-profile.md); each also takes ?advertising=legacy|extended and ?own-address=public. "
                        + "On a terminal one screen shows the central and the device, with keys that act on it. Runs until Ctrl-C, q "
                        + "or --seconds (exit 0); exit 3 when the controller cannot be opened or refuses to advertise.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", help: "the controller to advertise on: hci:N, uart:/dev/ttyX?baud=…, tcp:HOST:PORT",
                                         value: .deviceURI(.hci)),
                              OptionSpec(name: "--name", valueName: "NAME", help: "advertise and answer under this name instead of the device's"),
                              OptionSpec(name: "--seconds", valueName: "S", help: "stop after S seconds (default: at Ctrl-C)"),
                              OptionSpec(name: "--pairing", valueName: "MODE",
                                         help: "off (refuse pairing, the default), optional (pair when the central asks), required "
                                         + "(ask the central to pair at once)", value: .choice(["off", "optional", "required"])),
                              OptionSpec(name: "--privacy",
                                         help: "with --pairing: advertise from resolvable private addresses made with hwprobe's own IRK "
                                         + "(kept in the bond store, given to centrals that bond), a new one every 15 minutes"),
                              OptionSpec(name: "--io", valueName: "CAPABILITY",
                                         help: "what the served device can show and type when pairing (default: none, keyboard-display with --passkey)",
                                         value: .choice(["display", "display-yes-no", "keyboard", "keyboard-display", "none"])),
                              OptionSpec(name: "--passkey", valueName: "N", help: "the six-digit passkey to show or type when pairing"),
                              OptionSpec(name: "--record", valueName: "FILE",
                                         help: "record what the central asked and what was answered, as a cassette (replayable with serve replay:FILE)",
                                         value: .file),
                              OptionSpec(name: "--json", help: "one JSON object per line: {\"event\", \"t\", …} for advertising, connected, mtu, "
                                         + "subscribed, unsubscribed, read, write, notified, indicated, paired, encrypted, disconnected")],
                    positionals: [PositionalSpec(name: "DEVICE", help: "mirror-v1, standard-scale, replay:FILE or profile:FILE")],
                    requiredPositionals: 1, required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe serve --hci hci:0 mirror-v1", what: "the bench's mirror on the air; s steps on, 1–6 stop the scan with that error"),
                        Example(line: "hwprobe serve --hci hci:0 'mirror-v1?deviation=missing-cccd' --seconds 60 --json",
                                what: "a mirror that departs from its profile, for a minute, with what the app did as JSON lines"),
                        Example(line: "hwprobe serve --hci tcp:127.0.0.1:9101 'standard-scale?weight=81.5&advertising=extended'",
                                what: "a Weight Scale Service scale in one extended advertisement (bumble's central never sees scan responses)"),
                        Example(line: "hwprobe serve --hci hci:0 replay:mirror.cassette --record app.cassette",
                                what: "a recorded mirror answering as it did, keeping what the app asked this time"),
                        Example(line: "hwprobe serve --hci hci:0 profile:thermometer.json --name Lab-Thermo", what: "a device described in a file"),
                    ]),
        CommandSpec(name: "relay", synopsis: "hwprobe relay --hci URI --to URI ADDRESS [--seconds S] [--advertising automatic|legacy|extended] [--pairing off|optional|required] [--io CAPABILITY] [--passkey N] [--record FILE [--anonymize]] [--json]",
                    summary: "Stand between an app and its device: connect to ADDRESS through the --to controller, advertise what it "
                        + "advertises through the --hci controller, and forward every ATT request, response, notification and "
                        + "indication both ways as they happen, each link with its own MTU. Either side leaving ends the other's link "
                        + "within a second, and the relay advertises again for the next app (the device is connected when an app "
                        + "connects; each side pairs on its own). Prints the conversation (with "
                        + "--json, serve's events each with \"side\": \"app\" or \"device\"). Runs until Ctrl-C or --seconds (exit 0); "
                        + "exit 3 when a controller cannot be opened or the device is not found within 10 s.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", help: "the app's side, where the copy advertises: hci:N, uart:/dev/ttyX?baud=…, tcp:HOST:PORT",
                                         value: .deviceURI(.hci)),
                              OptionSpec(name: "--to", valueName: "URI", help: "the device's side: hci:N, uart:…, tcp:HOST:PORT (the same as --hci where "
                                         + "one controller can be central and peripheral at once), sim: or replay:FILE",
                                         value: .deviceURI(.hci)),
                              OptionSpec(name: "--seconds", valueName: "S", help: "stop after S seconds (default: at Ctrl-C)"),
                              OptionSpec(name: "--advertising", valueName: "FORM",
                                         help: "automatic (the device's own form), legacy, or extended (everything in one extended "
                                         + "advertisement, for centrals that never see scan responses, such as bumble's)",
                                         value: .choice(["automatic", "legacy", "extended"])),
                              OptionSpec(name: "--record", valueName: "FILE",
                                         help: "write the device as the app met it, as a cassette: replayable with --hci replay:FILE and serve replay:FILE",
                                         value: .file),
                              OptionSpec(name: "--pairing", valueName: "MODE",
                                         help: "the app's side, as serve's: off (the default), optional (pair when the app asks), required "
                                         + "(ask the app to pair at once); the device's side pairs (or uses its bond) when the device asks",
                                         value: .choice(["off", "optional", "required"])),
                              OptionSpec(name: "--io", valueName: "CAPABILITY",
                                         help: "what the relay shows and types when the app pairs (default: none, keyboard-display with --passkey)",
                                         value: .choice(["display", "display-yes-no", "keyboard", "keyboard-display", "none"])),
                              OptionSpec(name: "--passkey", valueName: "N", help: "the six-digit passkey to show or type when the app pairs"),
                              anonymize,
                              OptionSpec(name: "--json", help: "one JSON object per line: serve's events, each with \"side\": \"app\" or \"device\"")],
                    positionals: [PositionalSpec(name: "ADDRESS", help: "the device, AA:BB:CC:DD:EE:FF[/public|/random]")],
                    requiredPositionals: 1, required: ["--hci", "--to"],
                    examples: [
                        Example(line: "hwprobe relay --hci hci:0 --to hci:1 C0:FF:EE:00:4F:2A/random --record mirror.cassette",
                                what: "the phone's app meets the mirror through hwprobe; the whole conversation kept as a cassette"),
                        Example(line: "hwprobe relay --hci tcp:127.0.0.1:9101 --to tcp:127.0.0.1:9102 B0:B0:B0:00:00:01 --advertising extended --json",
                                what: "for bumble's central (it never sees scan responses), the conversation as JSON lines"),
                    ]),
        CommandSpec(name: "pair", synopsis: "hwprobe pair --hci URI ADDRESS [--io CAPABILITY] [--passkey N] [--legacy] [--record FILE [--anonymize]] [--json]",
                    summary: "Pair and bond with one peripheral (LE Secure Connections, or legacy pairing with --legacy) and keep its keys "
                        + "in the controller's bond store, so that it is encrypted without pairing next time. Prints the method and the "
                        + "keys kept, never their values. A pairing that fails exits 1 with its reason and stores nothing. With --record "
                        + "the cassette says the pairing happened (method, kinds of keys), never a key; on replay:FILE the pairing is "
                        + "simulated as recorded and kept for the run only.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", help: "the controller to pair from: hci:N, uart:/dev/ttyX?baud=…, tcp:HOST:PORT",
                                         value: .deviceURI(.hci)),
                              OptionSpec(name: "--io", valueName: "CAPABILITY",
                                         help: "what this side can show and type: display, display-yes-no, keyboard, keyboard-display, none "
                                         + "(default: none, keyboard-display with --passkey)",
                                         value: .choice(["display", "display-yes-no", "keyboard", "keyboard-display", "none"])),
                              OptionSpec(name: "--passkey", valueName: "N", help: "the six-digit passkey to type (or show); numeric comparison is refused"),
                              OptionSpec(name: "--legacy", help: "legacy pairing instead of LE Secure Connections"),
                              record, anonymize,
                              OptionSpec(name: "--json", help: "one JSON object: {\"address\", \"identity\", \"method\", \"secureConnections\", \"bonded\", \"keys\"}")],
                    positionals: [PositionalSpec(name: "ADDRESS", help: "the peripheral, AA:BB:CC:DD:EE:FF[/public|/random]")],
                    requiredPositionals: 1, required: ["--hci"],
                    examples: [
                        Example(line: "hwprobe pair --hci hci:0 C0:FF:EE:00:4F:2A/random", what: "Just Works: nothing to show or type"),
                        Example(line: "hwprobe pair --hci hci:0 C0:FF:EE:00:4F:2A/random --passkey 123456 --json",
                                what: "Passkey Entry with the passkey the device shows, the outcome as JSON"),
                    ]),
        CommandSpec(name: "bonds", synopsis: "hwprobe bonds [--hci URI] [--remove ADDRESS|all] [--json]",
                    summary: "List the bond store: with --hci that controller's bonds, without it every controller's. --remove forgets "
                        + "one device's bond (or all of the controller's). Identities, key kinds and security; never a key's value.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", help: "the controller whose bonds to show or change: hci:N, uart:…, tcp:HOST:PORT",
                                         value: .deviceURI(.hci)),
                              OptionSpec(name: "--remove", valueName: "ADDRESS", help: "forget this device's bond, or all (needs --hci)"),
                              OptionSpec(name: "--json", help: "one JSON object: {\"controllers\": [{\"controller\", \"bonds\": [{\"identity\", \"keys\", …}]}]}")],
                    examples: [
                        Example(line: "hwprobe bonds", what: "every bond hwprobe keeps"),
                        Example(line: "hwprobe bonds --hci hci:0 --remove C0:FF:EE:00:4F:2A", what: "forget one device: the next connection pairs again"),
                    ]),
        CommandSpec(name: "demo", synopsis: "hwprobe demo",
                    summary: "Everything against the simulated bench, with the flows drawn in the terminal.",
                    options: [],
                    examples: [Example(line: "hwprobe demo --reduce-motion", what: "the whole bench, without motion")]),
        CommandSpec(name: "help", synopsis: "hwprobe help [COMMAND] [--man]",
                    summary: "Print the same help as --help: the overview, or one command's; --man prints the manual page (roff).",
                    options: [OptionSpec(name: "--man", help: "print the whole manual page as roff instead (see scripts/manpage)")],
                    positionals: [PositionalSpec(name: "COMMAND", help: "the command to explain", value: .choice(commandNames))],
                    examples: [
                        Example(line: "hwprobe help scan", what: "the same as hwprobe scan --help"),
                        Example(line: "hwprobe help --man | man -l -", what: "read the manual page"),
                    ]),
        CommandSpec(name: "completions", synopsis: "hwprobe completions bash|zsh|fish",
                    summary: "Print a shell completion script made from this command table.",
                    options: [],
                    positionals: [PositionalSpec(name: "SHELL", help: shells.joined(separator: ", "), value: .choice(shells))],
                    requiredPositionals: 1,
                    examples: [
                        Example(line: "hwprobe completions bash > ~/.local/share/bash-completion/completions/hwprobe", what: "bash (or: source <(hwprobe completions bash))"),
                        Example(line: "hwprobe completions zsh > ~/.zfunc/_hwprobe", what: "zsh, with ~/.zfunc in fpath before compinit"),
                        Example(line: "hwprobe completions fish > ~/.config/fish/completions/hwprobe.fish", what: "fish"),
                    ]),
    ]

    /// The command names, for `help COMMAND`: spelled out, since the table cannot read itself while
    /// it is being made (a test checks that they are `all`'s names in order).
    static let commandNames = ["list", "gatt", "watch", "check", "weigh", "scan", "import", "haptics", "serve", "relay", "pair", "bonds", "demo", "help", "completions"]

    private static var globalSpellings: String {
        CommandSpec.global.map { option in
            option.spellings.reversed().joined(separator: "/") + (option.valueName.map { " " + $0 } ?? "")
        }.joined(separator: ", ")
    }

    static func spec(named name: String) -> CommandSpec? { all.first { $0.name == name } }

    static var overview: String {
        var lines = ["usage: hwprobe [global options] <command> [options]", "",
                     "Find scales, mirrors, cameras and haptic pads, and run the flows on them.", "", "commands:"]
        for spec in all { lines.append("  " + spec.name.padding(toLength: 13, withPad: " ", startingAt: 0) + spec.summary) }
        lines += ["",
                  "Global options (" + globalSpellings + ") may stand before or after the command.",
                  "Without a command, hwprobe lists.",
                  "`hwprobe help <command>` or `hwprobe <command> --help` for a command's options."]
        return lines.joined(separator: "\n") + "\n"
    }
}
