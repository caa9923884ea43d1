import Flows

/// What a key does on the screen shown: decided as a plain value from the key, the screen, the
/// focus and how much of a password is typed, so the whole table of docs/cli.md's "Interactive
/// use" can be tested without a terminal, a console or a presenter. ``FlowPresenter`` asks it and
/// carries the action out (moves the focus, edits its secret buffer, calls the command's controls).
struct FlowKeys: Sendable {
    /// What the presenter does for a key.
    enum Action: Hashable, Sendable {
        /// The key means nothing here (or would change nothing, like a character past the
        /// password's limit).
        case ignore
        /// Put the focus on this choice (possibly where it already is) and show it.
        case focus(Int)
        /// The person chose the choice at `index` with this `id` (Enter on the focus, or a digit
        /// in a list, which also moves the focus there).
        case choose(id: String, index: Int)
        /// Add the character to the password being typed.
        case type(Character)
        /// Take back the last whole character typed.
        case eraseCharacter
        /// Clear the password being typed.
        case eraseLine
        /// Hand the password typed so far to the command, and clear it here.
        case submitPassword
        /// Esc where the command gives it a meaning of its own (``FlowPresenter/Controls/back``).
        case back
        /// Leave the flow, as Ctrl-C does.
        case leave
        /// Show the screen again as it stands.
        case repaint
        /// Forget what the terminal shows and paint everything again (Ctrl-L).
        case redraw
    }

    /// The screen the key was pressed on.
    var screen: Screen
    /// The focused choice on `screen`.
    var focus: Int
    /// How many bytes of password are typed (UTF-8).
    var typedBytes: Int = 0
    /// Whether the command gives Esc a meaning of its own on `screen` (its `backLabel` has words).
    var escapeGoesBack = false
    /// The most bytes a password may have: as long as a password file may be.
    var passwordLimit = PasswordFile.limit

    /// What `key` does.
    func action(for key: Key) -> Action {
        Self.acceptsPassword(screen) ? passwordAction(for: key) : choiceAction(for: key)
    }

    /// In a focused password field, the keys edit the password; only Enter, Esc and Ctrl-C/D leave it.
    private func passwordAction(for key: Key) -> Action {
        switch key {
        case .character(let character):
            // A password is at most as long as a password file may be: the rest of a paste of a
            // whole file (100 k characters) is dropped without a repaint each, instead of stalling
            // the screen for seconds.
            typedBytes + character.utf8.count <= passwordLimit ? .type(character) : .ignore
        case .backspace: .eraseCharacter
        case .eraseLine: .eraseLine
        case .enter: .submitPassword
        case .escape, .interrupt: .leave
        case .endOfInput: typedBytes == 0 ? .leave : .ignore
        // As before the keys were a value of their own: the field is shown again, not forgotten.
        case .redraw: .repaint
        default: .ignore
        }
    }

    /// Elsewhere: actions move with Left/Right and Tab/Shift-Tab, lists with Up/Down and digits.
    private func choiceAction(for key: Key) -> Action {
        let choices = Self.choiceIDs(screen.content)
        var isList = false
        if case .pickList = screen.content { isList = true }
        switch key {
        case .left, .backTab, .up:
            guard !choices.isEmpty, isList == (key == .up) else { return .ignore }
            return .focus(max(0, focus - 1))
        case .right, .tab, .down:
            guard !choices.isEmpty, isList == (key == .down) else { return .ignore }
            return .focus(min(choices.count - 1, focus + 1))
        case .character(let character) where character.isNumber && character != "0":
            guard isList, let digit = character.wholeNumberValue, choices.indices.contains(digit - 1) else { return .ignore }
            return .choose(id: choices[digit - 1], index: digit - 1)
        case .enter:
            guard choices.indices.contains(focus) else { return .ignore }
            return .choose(id: choices[focus], index: focus)
        case .escape:
            return escapeGoesBack ? .back : .leave
        case .character("q"), .character("Q"), .interrupt:
            return .leave
        case .redraw:
            return .redraw
        default:
            return .ignore
        }
    }

    /// The key hint line: which keys do what on `screen`, with `back` the words for Esc when the
    /// command gives it a meaning of its own there.
    static func hints(for screen: Screen, focus: Int, back: String?) -> String {
        let escape = back.map { "Esc \($0)" } ?? "Esc quit"
        switch screen.content {
        case .actions(let actions) where actions.count > 1:
            let focused = actions.indices.contains(focus) ? actions[focus].title : actions[0].title
            return "←/→ move · Enter \(focused) · \(escape)"
        case .actions(let actions):
            return "Enter \(actions.first?.title ?? "") · \(escape)"
        case .pickList(let items) where !items.isEmpty:
            let digits = items.count == 1 ? "1" : "1–\(min(9, items.count))"
            return "↑/↓ move · \(digits) pick · Enter choose · \(escape)"
        case .passwordField(let field) where field.status != .disabled:
            return "type the password · Enter open · Esc cancel"
        default:
            return back == nil ? "Esc or q quit" : "\(escape) · Ctrl-C quit"
        }
    }

    /// Whether typing goes into a password field on `screen`.
    static func acceptsPassword(_ screen: Screen) -> Bool {
        if case .passwordField(let field) = screen.content { return field.status != .disabled && field.focused }
        return false
    }

    /// The ids a person can choose from on this content, in order.
    static func choiceIDs(_ content: ScreenContent) -> [String] {
        switch content {
        case .actions(let actions): actions.map(\.id)
        case .pickList(let items): items.map(\.id)
        default: []
        }
    }
}
