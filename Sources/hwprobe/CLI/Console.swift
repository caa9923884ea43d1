import Foundation
import Synchronization

/// Where hwprobe writes: the real terminal, or buffers a test reads back.
final class Console: Sendable {
    enum Stream: Sendable { case out, err }

    private let sink: @Sendable (Stream, String) -> Void
    let isTerminal: Bool
    let environment: [String: String]

    init(isTerminal: Bool, environment: [String: String], sink: @escaping @Sendable (Stream, String) -> Void) {
        self.isTerminal = isTerminal
        self.environment = environment
        self.sink = sink
    }

    static func standard() -> Console {
        Console(isTerminal: isatty(STDOUT_FILENO) == 1, environment: ProcessInfo.processInfo.environment) { stream, text in
            let handle = stream == .out ? FileHandle.standardOutput : FileHandle.standardError
            handle.write(Data(text.utf8))
        }
    }

    func out(_ text: String) { sink(.out, text) }
    func err(_ text: String) { sink(.err, text) }
}

/// A console whose output a test reads back.
final class CapturedConsole: Sendable {
    private final class Buffers: Sendable {
        let text = Mutex<(out: String, err: String)>(("", ""))
    }

    private let buffers = Buffers()
    let console: Console

    init(isTerminal: Bool = false, environment: [String: String] = [:]) {
        let buffers = buffers
        console = Console(isTerminal: isTerminal, environment: environment) { stream, text in
            buffers.text.withLock { if stream == .out { $0.out += text } else { $0.err += text } }
        }
    }

    var stdout: String { buffers.text.withLock { $0.out } }
    var stderr: String { buffers.text.withLock { $0.err } }
}
