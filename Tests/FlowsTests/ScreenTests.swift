@testable import Flows
import HAL
import Testing

/// Screens built the way the flows build them, shared by the tests below.
enum SampleScreens {
    static let wrongPassword = Screen(
        icon: "lock.shield.fill", title: "Enter Backup Password",
        subtitle: "Use the password this backup was made with.",
        content: .passwordField(PasswordField(maskedLength: 7, status: .error, focused: true)),
        motion: .shake, footer: Footer("Incorrect password", tone: .error))

    static let scanning = Screen(
        icon: "qrcode.viewfinder", title: "Scan Backup",
        content: .tileGrid(TileGrid(count: 8, scanned: [0, 2, 5])), motion: .numericText)

    static let lookingForMirror = Screen(
        icon: "dot.radiowaves.left.and.right", title: "Looking for your mirror",
        subtitle: "Bluetooth scan in progress. Make sure your mirror is switched on and within a few metres of this computer.",
        content: .spinner)

    static let confirmAlignment = Screen(
        icon: "scalemass", title: "Is the scale lined up?",
        content: .actions([ScreenAction(id: "confirm", title: "Confirm", role: .primary),
                           ScreenAction(id: "realign", title: "Re-align")]))

    /// One screen per content kind.
    static let everyContent: [ScreenContent] = [
        .none,
        .spinner,
        .progress(value: 0.5, line: "Scanning"),
        .countdown(3),
        .pickList([PickItem(id: "a", title: "Hallway mirror", detail: "-61 dBm"), PickItem(id: "b", title: "Bedroom mirror")]),
        .actions([ScreenAction(id: "c", title: "Confirm", role: .primary), ScreenAction(id: "r", title: "Re-align")]),
        .passwordField(PasswordField(maskedLength: 4)),
        .tileGrid(TileGrid(count: 4, scanned: [1])),
    ]
}

@Suite("Screen model and text snapshots")
struct ScreenTests {
    // MARK: Theme

    @Test func themeTokensHaveTheDesignedHexValues() {
        #expect(Theme.accent.hex == "#ff0040")
        #expect(Theme.background.hex == "#052235")
        #expect(Theme.primaryText.hex == "#ffffff")
        #expect(Theme.secondaryText.hex == "#9fb3c8")
        #expect(Theme.accent == RGB(red: 0xFF, green: 0x00, blue: 0x40))
        #expect(Theme.background == RGB(red: 0x05, green: 0x22, blue: 0x35))
        let all = [Theme.accent, Theme.background, Theme.primaryText, Theme.secondaryText, Theme.error, Theme.success, Theme.warning]
        #expect(Set(all).count == all.count, "every token is a distinct colour")
    }

    @Test(arguments: ["#ff0040", "ff0040", "#FF0040", "Ff0040"])
    func rgbParsesHexInEitherCase(text: String) {
        #expect(RGB(hex: text) == Theme.accent)
    }

    @Test(arguments: ["", "#", "#ff004", "#ff00400", "#gg0040", "0xff0040", "# ff004"])
    func rgbRejectsAnythingButSixHexDigits(text: String) {
        #expect(RGB(hex: text) == nil)
    }

    @Test func rgbDescribesItselfAsLowercaseHexWithLeadingZeros() {
        #expect(RGB(0x000A0B).description == "#000a0b")
        #expect("\(Theme.secondaryText)" == "#9fb3c8")
        #expect(RGB(0x1_FF0040) == Theme.accent, "bits above 24 are ignored")
        #expect(Theme.color(for: .error) == Theme.error)
        #expect(Theme.color(for: .secondary) == Theme.secondaryText)
    }

    // MARK: Motion

    @Test(arguments: MotionHint.allCases)
    func reduceMotionTurnsEveryHintIntoACrossfade(hint: MotionHint) {
        #expect(MotionSettings(reduceMotion: true).apply(hint) == .crossfade)
        #expect(MotionSettings(reduceMotion: false).apply(hint) == hint)
    }

    @Test func noHintStaysNoHint() {
        #expect(MotionSettings.reduced.apply(nil) == nil)
        #expect(MotionSettings.standard.apply(nil) == nil)
    }

    @Test func showOnlyPausesAreZeroWithReduceMotion() {
        #expect(MotionSettings.reduced.showPause(.milliseconds(600)) == .zero)
        #expect(MotionSettings.standard.showPause(.milliseconds(600)) == .milliseconds(600))
        #expect(MotionSettings.standard.showPause(.milliseconds(-5)) == .zero)
    }

    // MARK: Model

    @Test func tileGridCountsScannedTilesAndIgnoresStrayIndices() {
        let grid = TileGrid(count: 8, scanned: [0, 2, 5, 8, -1])
        #expect(grid.tiles.count == 8)
        #expect(grid.tiles.map(\.index) == Array(0..<8))
        #expect(grid.scannedCount == 3)
        #expect(grid.progressLine == "3 of 8 scanned")
        #expect(grid.fraction == 0.375)
        #expect(TileGrid(count: 0, scanned: []).fraction == nil)
    }

    @Test func passwordFieldKeepsOnlyALength() {
        #expect(PasswordField(maskedLength: -3).maskedLength == 0)
        #expect(PasswordField().focused && PasswordField().status == .normal)
    }

    @Test func outputsAreValuesThatCompareByContent() {
        let outputs: [FlowOutput] = [.screen(SampleScreens.scanning), .cue(.lightImpact),
                                     .announcement(Announcement("Incorrect password", priority: .assertive))]
        #expect(outputs[0] == .screen(SampleScreens.scanning))
        #expect(outputs[1] != .cue(.success))
        #expect(Set(outputs).count == 3)
        #expect(Announcement("3 of 8 scanned").priority == .polite)
        var changed = SampleScreens.scanning
        changed.motion = MotionSettings.reduced.apply(changed.motion)
        #expect(changed != SampleScreens.scanning && changed.motion == .crossfade)
    }

    // MARK: Snapshots

    @Test func wrongPasswordAt40Columns() {
        let expected = """
                       [lock.shield.fill]

                     Enter Backup Password
             Use the password this backup was made
                             with.

                  [ •••••••_                 ]
                         (field: error)

                   (error) Incorrect password

                        (motion: shake)
            """
        #expect(TextSnapshot.render(SampleScreens.wrongPassword, width: 40) == expected)
    }

    @Test func wrongPasswordAt80Columns() {
        let expected = """
                                           [lock.shield.fill]

                                         Enter Backup Password
                              Use the password this backup was made with.

                                      [ •••••••_                 ]
                                             (field: error)

                                       (error) Incorrect password

                                            (motion: shake)
            """
        #expect(TextSnapshot.render(SampleScreens.wrongPassword, width: 80) == expected)
    }

    @Test func scanProgressWithTilesAt40Columns() {
        let expected = """
                      [qrcode.viewfinder]

                          Scan Backup

                         3 of 8 scanned
             [###########-------------------]  37%

                [x] [ ] [x] [ ] [ ] [x] [ ] [ ]

                     (motion: numericText)
            """
        #expect(TextSnapshot.render(SampleScreens.scanning, width: 40) == expected)
    }

    @Test func actionsSitSideBySide() {
        let text = TextSnapshot.render(SampleScreens.confirmAlignment, width: 40)
        #expect(text.hasPrefix("              [scalemass]\n\n"))
        #expect(text.hasSuffix("\n       [ Confirm ]  [ Re-align ]"))
    }

    @Test(arguments: [40, 80])
    func subtitlesWrapAtWordsWithinTheWidth(width: Int) {
        let screen = SampleScreens.lookingForMirror
        let lines = TextSnapshot.render(screen, width: width).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { TextLayout.displayWidth($0) <= width })
        #expect(lines.allSatisfy { $0.last != " " }, "no trailing spaces")
        let heading = TextSnapshot.render(screen, width: width).components(separatedBy: "\n\n")[1]
        let subtitleLines = heading.split(separator: "\n").dropFirst()
        #expect(subtitleLines.count > 1)
        #expect(subtitleLines.map { $0.trimmingPrefix(while: { $0 == " " }) }.joined(separator: " ") == screen.subtitle,
                "lines break only between words")
    }

    @Test func narrowerScreensWrapIntoMoreLines() {
        let narrow = TextSnapshot.render(SampleScreens.lookingForMirror, width: 40).split(separator: "\n").count
        let wide = TextSnapshot.render(SampleScreens.lookingForMirror, width: 80).split(separator: "\n").count
        #expect(narrow > wide)
        let subtitle = TextLayout.wrap(SampleScreens.lookingForMirror.subtitle ?? "", width: 40)
        #expect(subtitle == ["Bluetooth scan in progress. Make sure", "your mirror is switched on and within a",
                             "few metres of this computer."])
    }

    @Test(arguments: [40, 80], SampleScreens.everyContent)
    func everyContentKindFitsAndIsDrawn(width: Int, content: ScreenContent) {
        let screen = Screen(icon: "scope", title: "Title", subtitle: "Subtitle", content: content)
        let text = TextSnapshot.render(screen, width: width)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { TextLayout.displayWidth($0) <= width })
        #expect(!text.contains("\u{1B}"), "no colour codes")
        #expect(text == TextSnapshot.render(screen, width: width), "deterministic")
        #expect(lines.first?.hasSuffix("[scope]") == true)

        let marker: String? = switch content {
        case .none: nil
        case .spinner: "(spinner)"
        case .progress: "[###############---------------]  50%"
        case .countdown: "( 3 )"
        case .pickList: "2. Bedroom mirror"
        case .actions: "[ Confirm ]  [ Re-align ]"
        case .passwordField: "[ ••••_ "
        case .tileGrid: "[ ] [x] [ ] [ ]"
        }
        if let marker {
            #expect(text.contains(marker), "\(text)")
        } else {
            #expect(lines.count == 4, "icon, gap, title, subtitle and nothing else")
        }
    }

    @Test func pickListsAlignDetailsAndWrapLongTitles() {
        let items = [PickItem(id: "a", title: "Hallway mirror", detail: "-61 dBm"),
                     PickItem(id: "b", title: "A mirror whose name goes on and on past the edge", detail: "-80 dBm")]
        let lines = TextSnapshot.content(.pickList(items), width: 40)
        #expect(lines == ["1. Hallway mirror                -61 dBm",
                          "2. A mirror whose name goes on and on",
                          "   past the edge",
                          "   -80 dBm"])
        let short = TextSnapshot.content(.pickList([items[0]]), width: 40)
        #expect(short == ["       1. Hallway mirror  -61 dBm"])
    }

    @Test func tilesWrapIntoRowsThatLineUp() {
        let grid = TileGrid(tiles: (0..<30).map { TileGrid.Tile(index: $0, state: $0 < 11 ? .scanned : .pending) })
        let lines = TextSnapshot.content(.tileGrid(grid), width: 40)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.count <= 40 })
        #expect(lines[0] == "[x] [x] [x] [x] [x] [x] [x] [x] [x] [x]")
        #expect(lines[1] == "[x] [ ] [ ] [ ] [ ] [ ] [ ] [ ] [ ] [ ]")
        let wide = TextSnapshot.content(.tileGrid(grid), width: 80)
        #expect(wide.count == 3 && wide[0].hasPrefix("                [x]"), "twelve per row, centred as a block")
        #expect(wide[2].hasPrefix("                [ ]"), "a short last row keeps the grid's margin")
    }

    @Test(arguments: [(0.0, 0, "  0%"), (0.5, 15, " 50%"), (0.999, 29, " 99%"), (1.0, 30, "100%"),
                      (-1, 0, "  0%"), (2, 30, "100%"), (0.001, 1, "  0%"), (.nan, 0, "  0%")])
    func progressBarsFillInProportion(value: Double, filled: Int, percent: String) {
        let bar = TextSnapshot.bar(value, width: 40)
        #expect(bar.count == 37)
        #expect(bar.count(where: { $0 == "#" }) == filled)
        #expect(bar.count(where: { $0 == "-" }) == 30 - filled)
        #expect(bar.hasSuffix("] " + percent))
    }

    @Test func passwordFieldsShowStatusAndFocus() {
        let unfocused = TextSnapshot.content(.passwordField(PasswordField(maskedLength: 3, focused: false)), width: 40)
        #expect(unfocused == ["      [ •••                      ]"])
        let disabled = TextSnapshot.content(.passwordField(PasswordField(maskedLength: 3, status: .disabled)), width: 40)
        #expect(disabled.count == 2 && !disabled[0].contains("_") && disabled[1].hasSuffix("(field: disabled)"))
        let long = TextSnapshot.content(.passwordField(PasswordField(maskedLength: 200)), width: 40)
        #expect(long[0].count(where: { $0 == "•" }) == 23 && long[0].count <= 40)
    }

    @Test func footerTonesAndMotionAreNoted() {
        var screen = Screen(icon: "lock.open.fill", title: "Unlocked", footer: Footer("Backup imported", tone: .success))
        #expect(TextSnapshot.render(screen, width: 40).hasSuffix("(success) Backup imported"))
        screen.footer = Footer("Decrypting. This can take up to 3 minutes.", tone: .secondary)
        screen.motion = .replace
        let text = TextSnapshot.render(screen, width: 40)
        #expect(text.contains("\n   Decrypting. This can take up to 3\n                minutes.\n"))
        #expect(text.hasSuffix("\n\n           (motion: replace)"))
        screen.motion = nil
        #expect(!TextSnapshot.render(screen, width: 40).contains("motion"))
    }

    // MARK: Layout helpers

    @Test func layoutCountsColumnsNotCharacters() {
        #expect(TextLayout.displayWidth("abc") == 3)
        #expect(TextLayout.displayWidth("🔒") == 2)
        #expect(TextLayout.displayWidth("日本") == 4)
        #expect(TextLayout.displayWidth("e\u{301}") == 1)
        #expect(TextLayout.displayWidth("⚖✓") == 2)
        #expect(TextLayout.center("日本", width: 10) == "   日本")
    }

    @Test func wrapBreaksWordsTooLongForALine() {
        #expect(TextLayout.wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TextLayout.wrap("a  b\n\nc", width: 10) == ["a b", "", "c"])
        #expect(TextLayout.wrap("one two three", width: 7) == ["one two", "three"])
        #expect(TextLayout.truncate("Hallway mirror", width: 8) == "Hallway…")
        #expect(TextLayout.truncate("short", width: 8) == "short")
    }
}
