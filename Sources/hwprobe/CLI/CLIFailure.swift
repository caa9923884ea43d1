/// A command's failure as the contract reports it: an exit code, and with --json an
/// `{"error": {"kind", "message"}}` object.
struct CLIFailure: Error, Equatable {
    enum Kind: String, Codable {
        case usage, device, permission, noKernelSupport, busy, wrongPassword, damaged, unsupported,
             incomplete, timedOut, disconnected, cancelled
    }

    var kind: Kind
    var message: String

    /// hwprobe-cli.md, "Exit codes".
    var exitCode: Int32 {
        switch kind {
        case .usage: 2
        case .device, .permission, .noKernelSupport, .busy, .unsupported: 3
        case .wrongPassword: 4
        case .damaged: 5
        case .incomplete, .timedOut, .disconnected: 1
        case .cancelled: 130
        }
    }
}

enum ExitCode {
    static let success: Int32 = 0
    static let usage: Int32 = 2
}
