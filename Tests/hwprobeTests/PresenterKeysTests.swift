import Flows
import HAL
import Testing
@testable import hwprobe

/// The keys of docs/cli.md's "Interactive use", as the presenter acts on them.
@Suite struct PresenterKeysTests {
    final class Record: Sendable {
        let chosen = Locked<[String]>([])
        let passwords = Locked<[String]>([])
        let left = Locked(0)
        let backs = Locked(0)
    }

    func presenter(_ record: Record, back: String? = nil) -> FlowPresenter {
        let presenter = FlowPresenter(console: CapturedConsole().console, sink: nil, noColorFlag: true, verbose: false, json: false,
                                      interactive: true)
        presenter.setControls(.init(
            choose: { id in record.chosen.withLock { $0.append(id) } },
            submitPassword: { bytes in record.passwords.withLock { $0.append(bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) } },
            backLabel: { screen in screen.content == .spinner ? back : nil },
            back: { record.backs.withLock { $0 += 1 } },
            leave: { record.left.withLock { $0 += 1 } }))
        return presenter
    }

    static let question = Screen(icon: "checkmark.circle", title: "Is the scale lined up?",
                                 content: .actions([ScreenAction(id: "confirm", title: "Confirm", role: .primary),
                                                    ScreenAction(id: "realign", title: "Re-align"),
                                                    ScreenAction(id: "cancel", title: "Cancel")]))
    static let mirrors = Screen(icon: "list.bullet.rectangle", title: "Choose your mirror",
                                content: .pickList([PickItem(id: "a", title: "Hall"), PickItem(id: "b", title: "Lab"),
                                                    PickItem(id: "c", title: "Shop")]))
    static let password = Screen(icon: "lock.shield.fill", title: "Enter Backup Password", content: .passwordField(PasswordField()))

    @Test func leftRightAndTabMoveBetweenActionsAndEnterTakesTheFocusedOne() {
        let record = Record()
        let presenter = presenter(record)
        presenter.show(.screen(Self.question))
        presenter.press(.enter)
        for key in [Key.right, .right, .right, .left, .tab, .backTab, .backTab, .backTab, .down, .up] { presenter.press(key) }
        presenter.press(.enter)
        presenter.press(.tab)
        presenter.press(.enter)
        #expect(record.chosen.withLock { $0 } == ["confirm", "confirm", "realign"], "the first is focused; the focus stops at the ends")
    }

    @Test func upDownAndDigitsPickFromAList() {
        let record = Record()
        let presenter = presenter(record)
        presenter.show(.screen(Self.mirrors))
        presenter.press(.down)
        presenter.press(.down)
        presenter.press(.down)
        presenter.press(.enter)
        presenter.press(.character("2"))
        presenter.press(.character("9"))  // no ninth mirror
        presenter.press(.right)  // lists move with Up/Down only
        presenter.press(.enter)
        #expect(record.chosen.withLock { $0 } == ["c", "b", "b"])
    }

    @Test func aNewScreenOfChoicesStartsAtTheFirstButAnUpdateKeepsTheFocus() {
        let record = Record()
        let presenter = presenter(record)
        presenter.show(.screen(Self.question))
        presenter.press(.right)
        var warned = Self.question
        warned.footer = Footer("Taking longer than usual.", tone: .warning)
        presenter.show(.screen(warned))
        presenter.press(.enter)
        presenter.show(.screen(Self.mirrors))
        presenter.show(.screen(Self.question))
        presenter.press(.enter)
        #expect(record.chosen.withLock { $0 } == ["realign", "confirm"])
    }

    @Test func escAndQLeaveUnlessEscMeansBackHere() {
        let record = Record()
        let presenter = presenter(record, back: "back to the password")
        presenter.show(.screen(Self.question))
        presenter.press(.escape)
        presenter.press(.character("q"))
        presenter.show(.screen(Screen(icon: "lock.shield.fill", title: "Decrypting", content: .spinner)))
        presenter.press(.escape)
        #expect(record.left.withLock { $0 } == 2)
        #expect(record.backs.withLock { $0 } == 1)
        presenter.press(.character("q"))
        #expect(record.left.withLock { $0 } == 3, "q always leaves")
    }

    @Test func aPasswordIsTypedEditedAndSubmittedAsBytes() {
        let record = Record()
        let presenter = presenter(record)
        presenter.show(.screen(Self.password))
        for character in "q1é!x" { presenter.press(.character(character)) }
        presenter.press(.backspace)  // the x
        presenter.press(.escape)
        #expect(record.left.withLock { $0 } == 1, "Esc leaves even with something typed")
        presenter.press(.endOfInput)
        #expect(record.left.withLock { $0 } == 1, "Ctrl-D only leaves an empty field")
        presenter.press(.enter)
        presenter.press(.enter)
        #expect(record.passwords.withLock { $0 } == ["q1é!", ""], "q is a letter here; the field is empty after a submit")
        presenter.press(.character("a"))
        presenter.press(.eraseLine)
        presenter.press(.endOfInput)
        #expect(record.left.withLock { $0 } == 2)
        #expect(record.chosen.withLock { $0 }.isEmpty)
    }

    @Test func aDisabledFieldTakesNoTyping() {
        let record = Record()
        let presenter = presenter(record)
        presenter.show(.screen(Screen(icon: "lock.shield.fill", title: "Decrypting",
                                      content: .passwordField(PasswordField(status: .disabled)))))
        presenter.press(.character("a"))
        presenter.press(.enter)
        #expect(record.passwords.withLock { $0 }.isEmpty)
    }

    @Test func unattendedScreensDropActionsNobodyCanPress() {
        let captured = CapturedConsole()
        let presenter = FlowPresenter(console: captured.console, sink: nil, noColorFlag: true, verbose: false, json: false)
        presenter.show(.screen(Self.question))
        #expect(captured.stdout == "Is the scale lined up?\n")
    }
}
