/// The contract's subcommands (hwprobe-cli.md, "Subcommands").
enum Commands {
    static let json = OptionSpec(name: "--json", help: "print exactly one JSON object on stdout")
    static let hci = OptionSpec(name: "--hci", valueName: "URI", help: "HCI controller: hci:N, uart:/dev/ttyX?baud=…&rtscts=…, tcp:HOST:PORT or sim:")
    static let haptics = OptionSpec(name: "--haptics", valueName: "URI", help: "play the flow's cues on a pad (usb:, hidraw:, evdev:) or on log: / bell:")

    static let all: [CommandSpec] = [
        CommandSpec(name: "list", synopsis: "hwprobe [list] [--hci URI]... [--scan-seconds S] [--json]",
                    summary: "List HCI controllers, cameras, haptic devices and serial ports, and scan for BLE peripherals on each --hci.",
                    options: [OptionSpec(name: "--hci", valueName: "URI", repeatable: true, help: hci.help),
                              OptionSpec(name: "--scan-seconds", valueName: "S", help: "how long to scan for peripherals (default 3)"),
                              json]),
        CommandSpec(name: "gatt", synopsis: "hwprobe gatt --hci URI ADDRESS [--json]",
                    summary: "Connect to a peripheral and dump its whole GATT database.",
                    options: [hci, json], positionals: ["ADDRESS  AA:BB:CC:DD:EE:FF, optionally /public or /random"],
                    requiredPositionals: 1, required: ["--hci"]),
        CommandSpec(name: "weigh", synopsis: "hwprobe weigh --hci URI [ADDRESS] [--timeout S] [--json]",
                    summary: "Read one stable weight from a scale (connected or broadcasting); the first found without ADDRESS. "
                        + "The scale must be seen within 10 s (or --timeout, if shorter): otherwise it is not found (exit 3).",
                    options: [hci, OptionSpec(name: "--timeout", valueName: "S",
                                              help: "give up after S seconds in all (default 30); finding the scale may take 10 of them"),
                              json],
                    positionals: ["ADDRESS  the scale to use (optional)"], required: ["--hci"]),
        CommandSpec(name: "scan", synopsis: "hwprobe scan --hci URI [--mirror ADDRESS] [--height-cm N] [--yes] [--haptics URI] [--json]",
                    summary: "Run the body-scan flow against a mirror.",
                    options: [hci, OptionSpec(name: "--mirror", valueName: "ADDRESS", help: "the mirror to use"),
                              OptionSpec(name: "--height-cm", valueName: "N", help: "the person's height (default 170)"),
                              OptionSpec(name: "--yes", help: "answer the flow's questions (pick the nearest mirror, confirm alignment)"),
                              haptics, json],
                    required: ["--hci"]),
        CommandSpec(name: "import", synopsis: "hwprobe import --camera URI [--password-file FILE] --out FILE [--force] [--timeout S] [--haptics URI] [--json]",
                    summary: "Scan a VB1 backup's codes from a camera, decrypt it and write the plaintext (mode 0600).",
                    options: [OptionSpec(name: "--camera", valueName: "URI", help: "v4l2:/dev/videoN, file:PATH[?pace=max] or sim:"),
                              OptionSpec(name: "--password-file", valueName: "FILE", help: "read the password from FILE instead of asking"),
                              OptionSpec(name: "--out", valueName: "FILE", help: "where to write the plaintext"),
                              OptionSpec(name: "--force", help: "replace an existing --out (only on success)"),
                              OptionSpec(name: "--timeout", valueName: "S", help: "give up when no new code arrives for S seconds (default 120 when unattended)"),
                              haptics, json],
                    required: ["--camera", "--out"]),
        CommandSpec(name: "haptics", synopsis: "hwprobe haptics --device URI --cue NAME [--detach-kernel-driver]",
                    summary: "Play one cue: lightImpact, mediumImpact, selection, success, warning or error.",
                    options: [OptionSpec(name: "--device", valueName: "URI", help: "usb:VID:PID, hidraw:PATH, evdev:PATH, log: or bell:"),
                              OptionSpec(name: "--cue", valueName: "NAME", help: "the cue to play"),
                              OptionSpec(name: "--detach-kernel-driver", help: "take a USB pad from the kernel driver holding it (xpad) while it plays")],
                    required: ["--device", "--cue"]),
        CommandSpec(name: "demo", synopsis: "hwprobe demo",
                    summary: "Everything against the simulated bench, with the flows drawn in the terminal.",
                    options: []),
    ]

    static func spec(named name: String) -> CommandSpec? { all.first { $0.name == name } }

    static var overview: String {
        var lines = ["usage: hwprobe <command> [options]", "",
                     "Find scales, mirrors, cameras and haptic pads, and run the flows on them.", "", "commands:"]
        for spec in all { lines.append("  " + spec.name.padding(toLength: 9, withPad: " ", startingAt: 0) + spec.summary) }
        lines += ["", "`hwprobe <command> --help` for a command's options. Without a command, hwprobe lists."]
        return lines.joined(separator: "\n") + "\n"
    }
}
