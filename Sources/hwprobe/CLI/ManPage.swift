import HAL

/// hwprobe(1) as roff, made from the command table (`hwprobe help --man`; `scripts/manpage`
/// writes it to a file), so the manual says what `--help` says and cannot fall behind it.
enum ManPage {
    static func roff(version: String = Version.line) -> String {
        var page: [String] = [
            ".TH HWPROBE 1 \"\" \"\(escape(version))\" \"User Commands\"",
            // Ragged right and no hyphenation (the man macros re-enable it per paragraph from the
            // HY register): URIs and option names must not be split.
            ".ad l",
            ".nh",
            ".nr HY 0",
            ".SH NAME",
            "hwprobe \\- find scales, mirrors, cameras and haptic pads, and run the flows on them",
            ".SH SYNOPSIS",
        ]
        for spec in Commands.all { page += synopsis(spec.synopsis) }
        page += [
            ".SH DESCRIPTION",
            escape("hwprobe is for bench-testing body-scanning mirrors, smart scales, cameras and haptic pads: "
                   + "find what is attached, see which driver claims it and why, talk to it, and run the app's flows "
                   + "(backup import from QR codes, body scan with a mirror) against real hardware or the built-in simulated bench (sim:)."),
            ".PP",
            escape("Without a command, hwprobe lists. Global options may stand before or after the command. "
                   + "With --json, stdout carries exactly one JSON object; progress and diagnostics go to stderr."),
            ".SH COMMANDS",
        ]
        for spec in Commands.all {
            page += [".SS \(spec.name)", ".nf", escape(spec.synopsis), ".fi", ".PP", escape(spec.summary)]
            for positional in spec.positionals {
                page += [".TP", "\\fI\(escape(positional.name))\\fR", escape(positional.help)]
            }
            for option in spec.options { page += item(option) }
        }
        page.append(".SH GLOBAL OPTIONS")
        for option in CommandSpec.global { page += item(option) }
        page += [".SH DEVICE URIS", escape("Wherever an option takes a URI:")]
        for (title, family) in [("Bluetooth controllers (--hci)", DeviceURI.Family.hci), ("cameras (--camera)", .camera),
                                ("haptic pads (--device, --haptics)", .haptics)] {
            page += [".TP", escape(title), DeviceURIArgument.forms(family).map { "\\fB\(escape($0.example))\\fR" }.joined(separator: ", ")]
        }
        page += [
            ".PP",
            escape("A device typed the way people type it (hci0, /dev/ttyACM0, 127.0.0.1:9101, /dev/video0, clip.y4m, "
                   + "/dev/hidraw3, 045e:028e) is refused with the URI it most likely meant."),
            ".PP",
            escape("A device can also be named by what survives a replug, as the id that list and watch print: "
                   + "its serial number (usb:045e:028e?serial=S, v4l2:?serial=S, hidraw:?serial=S, evdev:?serial=S, uart:?serial=S), "
                   + "its USB port (usb:045e:028e@1-2.3, v4l2:@1-5, hidraw:@PORT, evdev:@PORT, uart:@PORT), a camera's V4L2 bus "
                   + "(v4l2:@platform:vivid-000) or a controller's address (hci:AA:BB:CC:DD:EE:FF). It is looked up among "
                   + "what is attached when the command starts: none is exit 3, more than one a usage error."),
            ".SH EXIT STATUS",
        ]
        for (code, meaning) in exitCodes { page += [".TP", "\\fB\(code)\\fR", escape(meaning)] }
        page.append(".SH EXAMPLES")
        for spec in Commands.all {
            for example in spec.examples {
                page += [".TP", "\\fB\(escape(example.line))\\fR", escape(example.what)]
            }
        }
        page += [".SH ENVIRONMENT"]
        for (name, meaning) in environment { page += [".TP", "\\fB\(name)\\fR", escape(meaning)] }
        page += [".SH SEE ALSO", "\\fBbtmon\\fR(1), \\fBwireshark\\fR(1), \\fBv4l2\\-ctl\\fR(1)"]
        return page.joined(separator: "\n") + "\n"
    }

    /// docs/cli.md, "Exit codes".
    static let exitCodes: [(Int, String)] = [
        (0, "done (list: whenever it could report anything)"),
        (1, "the flow ended in failure (mirror error, timeout, disconnection)"),
        (2, "usage error"),
        (3, "device or permission problem (not found, no kernel support, busy, not permitted)"),
        (4, "wrong password"),
        (5, "damaged or unsupported backup"),
        (130, "cancelled by Ctrl-C"),
    ]

    static let environment: [(String, String)] = [
        ("NO_COLOR", "when set, no colours (as --no-color)"),
        ("HWPROBE_SIM_SPEED", "how many times faster than real time the simulated bench runs, and a replay: cassette plays (the demo defaults to 4)"),
        ("HWPROBE_DECODER", "the QR decoder for camera frames: zxing+zbar (default), zxing or zbar"),
        ("HWPROBE_V4L2_FORMAT", "the pixel format a v4l2: camera streams in (a fourcc it offers with a grey plane, e.g. NM12 or YUYV), instead of the cheapest"),
    ]

    private static func item(_ option: OptionSpec) -> [String] {
        var head = option.alias.map { "\\fB\(escape($0))\\fR, " } ?? ""
        head += "\\fB\(escape(option.name))\\fR"
        if let value = option.valueName { head += " \\fI\(escape(value))\\fR" }
        return [".TP", head, escape(option.help) + (option.repeatable ? " (may be given more than once)" : "")]
    }

    /// A synopsis as `.SY`/`.YS` (groff's man extension): the subcommand bold, continuation lines
    /// indented past `hwprobe`.
    private static func synopsis(_ text: String) -> [String] {
        let words = text.split(separator: " ", maxSplits: 2).map(String.init)
        guard words.count >= 2, words[0] == "hwprobe" else { return [".SY hwprobe", escape(text), ".YS"] }
        return [".SY hwprobe", "\\fB\(escape(words[1]))\\fR" + (words.count > 2 ? " " + escape(words[2]) : ""), ".YS"]
    }

    /// Text as roff reads it literally: backslashes and hyphens escaped, a leading control
    /// character defused, and anything beyond ASCII as a groff Unicode escape (so the page renders
    /// the same whatever encoding the man program assumes).
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where scalar.isASCII: out.unicodeScalars.append(scalar)
            default: out += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
