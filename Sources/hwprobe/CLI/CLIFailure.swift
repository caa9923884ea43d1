/// A command's failure as the contract reports it: an exit code, and with --json an
/// `{"error": {"kind", "message"}}` object.
struct CLIFailure: Error, Equatable {
    enum Kind: String, Codable {
        case usage, device, permission, noKernelSupport, busy, wrongPassword, damaged, unsupported,
             incomplete, timedOut, disconnected, cancelled
    }

    var kind: Kind
    var message: String
    /// Where the contract gives this kind a different code in one command (an unsupported backup is 5).
    var exitOverride: Int32?

    init(kind: Kind, message: String, exitOverride: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.exitOverride = exitOverride
    }

    /// docs/cli.md, "Exit codes".
    var exitCode: Int32 {
        if let exitOverride { return exitOverride }
        return switch kind {
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
