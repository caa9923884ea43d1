import Flows
import Testing
@testable import hwprobe

/// The table of docs/cli.md's "Interactive use" as a value: key × screen × focus → action.
@Suite struct FlowKeysTests {
    // The screens PresenterKeysTests presses keys on, here without a presenter.
    static let question = PresenterKeysTests.question
    static let mirrors = PresenterKeysTests.mirrors
    static let password = PresenterKeysTests.password
    static let decrypting = Screen(icon: "lock.shield.fill", title: "Enter Backup Password",
                                   content: .passwordField(PasswordField(maskedLength: 4, status: .disabled)))
    static let unfocused = Screen(icon: "lock.shield.fill", title: "Enter Backup Password",
                                  content: .passwordField(PasswordField(focused: false)))
    static let waiting = Screen(icon: "hourglass", title: "Decrypting", content: .spinner)

    struct Row: Sendable, CustomTestStringConvertible {
        var screen: Screen
        var focus = 0
        var typed = 0
        var back = false
        var key: Key
        var action: FlowKeys.Action
        var testDescription: String { "\(key) on \(screen.content) at \(focus) (typed \(typed), back \(back)) → \(action)" }
    }

    static let table: [Row] = [
        // Actions: Left/Right and Tab/Shift-Tab move, stopping at the ends; Up/Down do not.
        Row(screen: question, key: .right, action: .focus(1)),
        Row(screen: question, focus: 1, key: .tab, action: .focus(2)),
        Row(screen: question, focus: 2, key: .right, action: .focus(2)),
        Row(screen: question, focus: 2, key: .left, action: .focus(1)),
        Row(screen: question, focus: 1, key: .backTab, action: .focus(0)),
        Row(screen: question, key: .left, action: .focus(0)),
        Row(screen: question, key: .down, action: .ignore),
        Row(screen: question, focus: 1, key: .up, action: .ignore),
        Row(screen: question, key: .enter, action: .choose(id: "confirm", index: 0)),
        Row(screen: question, focus: 2, key: .enter, action: .choose(id: "cancel", index: 2)),
        Row(screen: question, focus: 7, key: .enter, action: .ignore),
        Row(screen: question, key: .character("2"), action: .ignore),
        // Lists: Up/Down move, digits pick (1-based) and move the focus; Left/Right/Tab do not.
        Row(screen: mirrors, key: .down, action: .focus(1)),
        Row(screen: mirrors, focus: 2, key: .down, action: .focus(2)),
        Row(screen: mirrors, focus: 2, key: .up, action: .focus(1)),
        Row(screen: mirrors, key: .right, action: .ignore),
        Row(screen: mirrors, key: .tab, action: .ignore),
        Row(screen: mirrors, focus: 1, key: .left, action: .ignore),
        Row(screen: mirrors, focus: 1, key: .backTab, action: .ignore),
        Row(screen: mirrors, key: .character("3"), action: .choose(id: "c", index: 2)),
        Row(screen: mirrors, key: .character("4"), action: .ignore),
        Row(screen: mirrors, key: .character("0"), action: .ignore),
        Row(screen: mirrors, focus: 1, key: .enter, action: .choose(id: "b", index: 1)),
        // Leaving: Esc, q, Q and Ctrl-C leave, unless the command gives Esc a meaning there.
        Row(screen: mirrors, key: .escape, action: .leave),
        Row(screen: question, key: .character("q"), action: .leave),
        Row(screen: waiting, key: .character("Q"), action: .leave),
        Row(screen: waiting, key: .interrupt, action: .leave),
        Row(screen: waiting, back: true, key: .escape, action: .back),
        Row(screen: waiting, back: true, key: .character("q"), action: .leave),
        Row(screen: waiting, back: true, key: .interrupt, action: .leave),
        // Nothing to choose: moves, digits and Enter do nothing; Ctrl-L paints everything again.
        Row(screen: waiting, key: .right, action: .ignore),
        Row(screen: waiting, key: .enter, action: .ignore),
        Row(screen: waiting, key: .redraw, action: .redraw),
        Row(screen: question, key: .endOfInput, action: .ignore),
        // A focused password field takes the characters, q and digits included.
        Row(screen: password, key: .character("q"), action: .type("q")),
        Row(screen: password, typed: 3, key: .character("7"), action: .type("7")),
        Row(screen: password, key: .backspace, action: .eraseCharacter),
        Row(screen: password, typed: 5, key: .eraseLine, action: .eraseLine),
        Row(screen: password, typed: 5, key: .enter, action: .submitPassword),
        Row(screen: password, typed: 5, key: .escape, action: .leave),
        Row(screen: password, typed: 5, back: true, key: .escape, action: .leave),
        Row(screen: password, key: .interrupt, action: .leave),
        Row(screen: password, key: .endOfInput, action: .leave),
        Row(screen: password, typed: 1, key: .endOfInput, action: .ignore),
        Row(screen: password, key: .left, action: .ignore),
        Row(screen: password, key: .redraw, action: .repaint),
        // Up to the limit of a password file, counted in UTF-8 bytes.
        Row(screen: password, typed: PasswordFile.limit - 1, key: .character("x"), action: .type("x")),
        Row(screen: password, typed: PasswordFile.limit, key: .character("x"), action: .ignore),
        Row(screen: password, typed: PasswordFile.limit - 1, key: .character("é"), action: .ignore),
        Row(screen: password, typed: PasswordFile.limit - 2, key: .character("é"), action: .type("é")),
        // A field that is disabled (decrypting) or not focused takes no typing: q leaves.
        Row(screen: decrypting, key: .character("q"), action: .leave),
        Row(screen: decrypting, key: .enter, action: .ignore),
        Row(screen: unfocused, key: .character("a"), action: .ignore),
        Row(screen: unfocused, key: .backspace, action: .ignore),
    ]

    @Test(arguments: table)
    func keyOnScreenGivesAction(_ row: Row) {
        let keys = FlowKeys(screen: row.screen, focus: row.focus, typedBytes: row.typed, escapeGoesBack: row.back)
        #expect(keys.action(for: row.key) == row.action)
    }

    @Test func hintsNameTheFocusedActionAndWhatEscDoes() {
        #expect(FlowKeys.hints(for: Self.question, focus: 1, back: nil) == "←/→ move · Enter Re-align · Esc quit")
        #expect(FlowKeys.hints(for: Self.question, focus: 9, back: nil) == "←/→ move · Enter Confirm · Esc quit")
        #expect(FlowKeys.hints(for: Self.mirrors, focus: 0, back: nil) == "↑/↓ move · 1–3 pick · Enter choose · Esc quit")
        #expect(FlowKeys.hints(for: Self.password, focus: 0, back: nil) == "type the password · Enter open · Esc cancel")
        #expect(FlowKeys.hints(for: Self.decrypting, focus: 0, back: nil) == "Esc or q quit")
        #expect(FlowKeys.hints(for: Self.waiting, focus: 0, back: "back to the password")
                == "Esc back to the password · Ctrl-C quit")
    }

    @Test func choicesAreTheActionsOrTheListItemsInOrder() {
        #expect(FlowKeys.choiceIDs(Self.question.content) == ["confirm", "realign", "cancel"])
        #expect(FlowKeys.choiceIDs(Self.mirrors.content) == ["a", "b", "c"])
        #expect(FlowKeys.choiceIDs(Self.password.content).isEmpty)
        #expect(FlowKeys.acceptsPassword(Self.password))
        #expect(!FlowKeys.acceptsPassword(Self.decrypting))
        #expect(!FlowKeys.acceptsPassword(Self.unfocused))
    }
}
