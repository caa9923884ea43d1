import CFuzzerDriver
import Glibc

nonisolated(unsafe) private var harness: ([UInt8]) -> Void = { _ in }

/// Hands the process to libFuzzer, which calls `body` with each input (and parses the command
/// line: corpus folders, -max_total_time, -runs, a crash file to replay…). Never returns.
/// `flags` go before the command line's own, so a target can set its defaults and a person can
/// still override them.
public func runFuzzer(flags: [String] = [], _ body: @escaping ([UInt8]) -> Void) -> Never {
    harness = body
    let given = (0..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] }
    var arguments: [UnsafeMutablePointer<CChar>?] = given.prefix(1) + flags.map { strdup($0) } + given.dropFirst() + [nil]
    var argc = CInt(arguments.count - 1)
    let status = arguments.withUnsafeMutableBufferPointer { buffer in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            harness(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        }
    }
    exit(status)
}
