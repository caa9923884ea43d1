import Flows
import Testing
@testable import hwprobe

@Suite("Terminal renderer")
struct TerminalRendererTests {
    static let escape = "\u{1B}"

    static let password = Screen(
        icon: "lock.shield.fill", title: "Enter Backup Password",
        subtitle: "Use the password this backup was made with.",
        content: .passwordField(PasswordField(maskedLength: 7, status: .error)), motion: .shake,
        footer: Footer("Incorrect password", tone: .error))

    static func scanning(_ scanned: Set<Int>) -> Screen {
        Screen(icon: "qrcode.viewfinder", title: "Scan Backup", content: .tileGrid(TileGrid(count: 8, scanned: scanned)),
               motion: .numericText)
    }

    /// Screens of every content kind, with long words and wide glyphs to stress the layout.
    static let varied: [Screen] = [
        password,
        scanning([0, 3]),
        Screen(icon: "dot.radiowaves.left.and.right", title: "Looking for your mirror",
               subtitle: "Bluetooth scan in progress. Make sure your mirror is switched on and nearby.", content: .spinner,
               footer: Footer("This is taking longer than usual.", tone: .warning)),
        Screen(icon: "scalemass", title: "Pick a mirror",
               content: .pickList([PickItem(id: "a", title: "Hallway mirror", detail: "-61 dBm"),
                                   PickItem(id: "b", title: "A mirror with an extraordinarily long name indeed", detail: "-80 dBm")])),
        Screen(icon: "scalemass", title: "Is the scale lined up?",
               content: .actions([ScreenAction(id: "c", title: "Confirm", role: .primary), ScreenAction(id: "r", title: "Re-align"),
                                  ScreenAction(id: "x", title: "Cancel scan", role: .destructive)])),
        Screen(icon: "figure.stand", title: "Scanning", content: .progress(value: 0.42, line: "Hold still")),
        Screen(icon: "timer", title: "Get ready", content: .countdown(3)),
        Screen(icon: "unknown.symbol", title: "Supercalifragilisticexpialidocious-and-then-some", content: .none),
        Screen(icon: "qrcode.viewfinder", title: "Scan Backup", content: .tileGrid(TileGrid(count: 40, scanned: [1, 2, 39]))),
    ]

    func visibleWidth(_ line: String) -> Int { TextLayout.displayWidth(TerminalRenderer.ANSI.strip(line)) }

    @Test func noColorMeansNoEscapesAtAll() {
        let renderer = TerminalRenderer(width: 60, isTerminal: true, noColor: true)
        for screen in Self.varied {
            #expect(renderer.frame(for: screen).allSatisfy { !$0.contains(Self.escape) })
        }
        #expect(renderer.frame(for: Self.password).contains { $0.hasSuffix("🔒") })
    }

    @Test func colourUsesTheThemeAs24BitEscapes() {
        let renderer = TerminalRenderer(width: 60, isTerminal: true, noColor: false)
        let text = renderer.frame(for: Self.password).joined(separator: "\n")
        #expect(text.contains("\(Self.escape)[1;38;2;255;0;64m🔒\(Self.escape)[0m"), "the icon in the accent colour")
        #expect(text.contains("38;2;255;255;255mEnter Backup Password"), "the title in white")
        #expect(text.contains("38;2;159;179;200mUse the password"), "the subtitle in the secondary colour")
        #expect(text.contains("38;2;255;107;107mIncorrect password"), "the error footer in the error colour")
        let plain = TerminalRenderer(width: 60, isTerminal: true, noColor: true).frame(for: Self.password)
        #expect(renderer.frame(for: Self.password).map(TerminalRenderer.ANSI.strip) == plain, "colour changes nothing but colour")
    }

    @Test func noColorComesFromTheFlagOrANonEmptyEnvironmentVariable() {
        #expect(TerminalRenderer.colorDisabled(flag: true, environment: [:]))
        #expect(TerminalRenderer.colorDisabled(flag: false, environment: ["NO_COLOR": "1"]))
        #expect(!TerminalRenderer.colorDisabled(flag: false, environment: ["NO_COLOR": ""]))
        #expect(!TerminalRenderer.colorDisabled(flag: false, environment: [:]))

        let console = CapturedConsole(isTerminal: true, environment: ["NO_COLOR": "yes", "COLUMNS": "50"]).console
        let renderer = TerminalRenderer(console: console, noColorFlag: false)
        #expect(renderer.noColor && renderer.isTerminal && renderer.width == 50)
        let piped = TerminalRenderer(console: CapturedConsole().console, noColorFlag: false)
        #expect(!piped.noColor && !piped.isTerminal && piped.width == TerminalRenderer.defaultWidth)
        #expect(TerminalRenderer.width(environment: ["COLUMNS": "0"]) == nil)
        #expect(TerminalRenderer.width(environment: ["COLUMNS": "wide"]) == nil)
        #expect(TerminalRenderer(width: 3, isTerminal: true, noColor: true).width == TerminalRenderer.minimumWidth)
    }

    @Test func theFocusedActionAndRowAreMarkedWithoutMovingAnything() {
        let renderer = TerminalRenderer(width: 60, isTerminal: true, noColor: true)
        let unfocused = renderer.frame(for: Self.varied[4])
        let first = renderer.frame(for: Self.varied[4], focus: 0)
        let second = renderer.frame(for: Self.varied[4], focus: 1)
        #expect(first.contains { $0.contains("[▸Confirm◂]  [ Re-align ]  [ Cancel scan ]") })
        #expect(second.contains { $0.contains("[ Confirm ]  [▸Re-align◂]  [ Cancel scan ]") })
        #expect(unfocused.contains { $0.contains("[ Confirm ]  [ Re-align ]") })
        #expect(first.map(visibleWidth) == second.map(visibleWidth), "the focus changes no widths")
        let list = renderer.frame(for: Self.varied[3], focus: 1)
        #expect(list.contains { $0.contains("  1  Hallway mirror") })
        #expect(list.contains { $0.contains("▸ 2  A mirror") })
        let colour = TerminalRenderer(width: 60, isTerminal: true, noColor: false).frame(for: Self.varied[4], focus: 0)
        #expect(colour.contains { $0.contains("\(Self.escape)[1;7;38;2;255;0;64m[▸Confirm◂]") }, "the focused one in reverse video")
    }

    @Test func aPasswordBeingTypedShowsThatKeysArriveButNotHowMany() {
        let renderer = TerminalRenderer(width: 60, isTerminal: true, noColor: true)
        let idle = Screen(icon: "lock.shield.fill", title: "Enter Backup Password", content: .passwordField(PasswordField()))
        let empty = renderer.frame(for: idle, typing: PasswordTyping(isEmpty: true, keystrokes: 0))
        #expect(empty.contains { $0.contains("[ ▌") } && !empty.joined().contains("•"))
        let three = renderer.frame(for: idle, typing: PasswordTyping(isEmpty: false, keystrokes: 3))
        let thirty = renderer.frame(for: idle, typing: PasswordTyping(isEmpty: false, keystrokes: 30))
        let four = renderer.frame(for: idle, typing: PasswordTyping(isEmpty: false, keystrokes: 4))
        #expect(three.contains { $0.contains("[ •••••••• ◒▌") })
        #expect(four.contains { $0.contains("[ •••••••• ◐▌") }, "the mark turns with each key")
        #expect(three != four)
        #expect(three.joined().filter { $0 == "•" }.count == thirty.joined().filter { $0 == "•" }.count, "the dots never count the length")
    }

    @Test func elsewhereEachChangeIsOnePlainLine() {
        var renderer = TerminalRenderer(width: 40, isTerminal: false, noColor: false)
        let outputs = [Self.scanning([0]), Self.scanning([0]), Self.scanning([0, 5]), Self.password].map { renderer.line(for: $0) }
        #expect(outputs == ["Scan Backup — 1 of 8 scanned\n", "", "Scan Backup — 2 of 8 scanned\n",
                            "Enter Backup Password — Use the password this backup was made with. — Incorrect password\n"])
        #expect(outputs.allSatisfy { !$0.contains(Self.escape) })
        #expect(renderer.summary(for: Self.varied[4]) == "Is the scale lined up? — Confirm / Re-align / Cancel scan")
        #expect(renderer.summary(for: Self.varied[6]) == "Get ready — 3")
        #expect(renderer.summary(for: Self.varied[3]).hasPrefix("Pick a mirror — Hallway mirror (-61 dBm), A mirror"))
        #expect(renderer.summary(for: Self.varied[2]).hasPrefix("Looking for your mirror — Bluetooth scan in progress."),
                "the subtitle's facts are in the line too")
    }

    @Test(arguments: [16, 24, 40, 80, 120])
    func noLineIsWiderThanTheTerminal(width: Int) {
        for noColor in [true, false] {
            let renderer = TerminalRenderer(width: width, isTerminal: true, noColor: noColor)
            for screen in Self.varied {
                let lines = renderer.frame(for: screen)
                #expect(lines.allSatisfy { visibleWidth($0) <= width }, "\(lines.map(TerminalRenderer.ANSI.strip).joined(separator: "\n"))")
                #expect(lines.allSatisfy { !TerminalRenderer.ANSI.strip($0).hasSuffix(" ") })
            }
        }
    }

    @Test func progressBarsUseBlocksAndEighths() {
        let renderer = TerminalRenderer(width: 42, isTerminal: true, noColor: true)
        let frame = renderer.frame(for: Screen(icon: "scope", title: "Scanning", content: .progress(value: 0.5, line: "Hold still")))
        let bar = frame.last ?? ""
        #expect(bar.contains(String(repeating: "█", count: 16) + String(repeating: "░", count: 16) + "   50%"))
        let partial = renderer.frame(for: Screen(icon: "scope", title: "", content: .progress(value: 0.42, line: "")))
        #expect(partial.last?.contains(String(repeating: "█", count: 13) + "▌░") == true)
    }

    @Test func tilesAndThePasswordFieldAreDrawn() {
        let renderer = TerminalRenderer(width: 40, isTerminal: true, noColor: true)
        let tiles = renderer.frame(for: Self.scanning([0, 2]))
        #expect(tiles.contains { $0.hasSuffix("■ □ ■ □ □ □ □ □") })
        #expect(tiles.contains { $0.hasSuffix("2 of 8 scanned") })
        let field = renderer.frame(for: Self.password)
        #expect(field.contains { $0.contains("[ •••••••▌") && $0.hasSuffix(" ]") })
        let disabled = renderer.frame(for: Screen(icon: "lock.shield.fill", title: "Decrypting",
                                                  content: .passwordField(PasswordField(maskedLength: 3, status: .disabled))))
        #expect(disabled.contains { $0.contains("[ •••  ") && !$0.contains("▌") })
    }

    @Test(arguments: [("lock.shield.fill", "🔒"), ("lock.open.fill", "🔓"), ("scalemass", "⚖"), ("scalemass.fill", "⚖"),
                      ("dot.radiowaves.left.and.right", "⌁"), ("checkmark.circle.fill", "✓"), ("xmark.octagon.fill", "✗"),
                      ("exclamationmark.triangle.fill", "⚠"), ("viewfinder", "◎"), ("no.such.symbol", IconGlyphs.fallback)])
    func iconsMapToGlyphs(name: String, glyph: String) {
        #expect(IconGlyphs.glyph(for: name) == glyph)
    }
}

@Suite struct TerminalColorDepthTests {
    @Test func trueColorOnlyWhenTheTerminalSaysSo() {
        #expect(TerminalRenderer.supportsTrueColor(environment: ["COLORTERM": "truecolor"]))
        #expect(TerminalRenderer.supportsTrueColor(environment: ["COLORTERM": "24bit"]))
        #expect(!TerminalRenderer.supportsTrueColor(environment: ["TERM": "xterm-256color"]))
    }

    @Test func paletteFallbackPicksTheNearestCubeColour() {
        // The accent #ff0040 is red 5, green 0, blue 1 in the cube: 16 + 180 + 0 + 1.
        #expect(TerminalRenderer.ANSI.paletteIndex(RGB(red: 0xFF, green: 0x00, blue: 0x40)) == 197)
        #expect(TerminalRenderer.ANSI.style(color: RGB(red: 0xFF, green: 0x00, blue: 0x40), bold: false, trueColor: false) == "\u{1B}[38;5;197m")
        #expect(TerminalRenderer.ANSI.style(color: RGB(red: 0xFF, green: 0x00, blue: 0x40), bold: true) == "\u{1B}[1;38;2;255;0;64m")
    }
}
