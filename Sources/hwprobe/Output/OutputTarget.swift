import Foundation
import LinuxIO

/// Files hwprobe writes that may carry personal data — `import --out` (the decrypted vault),
/// `--btsnoop` (addresses, names, readings), and the future `--record` / `--report` files — all
/// go through LinuxIO's ``PrivateFile`` (0600, never through a symbolic link, never over what they
/// must not replace, never half there). This is the CLI's side of it: the check before any device
/// opens (docs/cli.md: a typo costs nothing), the contract's error kinds and
/// words, and the cleanup on SIGTERM, SIGHUP and SIGINT through the one interrupt policy.
enum OutputTarget {
    /// Throws a usage error (exit 2) for what the person typed wrong, a permission error (exit 3)
    /// for a directory we may not write. `replacing`: `--force` was given (only `--out` has it).
    static func check(_ path: String, replacing: Bool, option: String = "--out") throws(CLIFailure) {
        do {
            try PrivateFile.check(path, existing: replacing ? .replaceRegularFile : .refuse)
        } catch {
            throw failure(error, option: option)
        }
    }

    /// Writes `bytes` to `path` so that it either appears whole, with mode 0600, or not at all
    /// (and an existing regular file is replaced only with `replacing`). An interrupt while it is
    /// written abandons it: nothing named is left, and the command ends as cancelled.
    /// `evenAfterInterrupt`: an interrupt that came before the write began (the Ctrl-C that ended
    /// a recorded session) does not abandon it; only one during the write does.
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String, replacing: Bool, option: String = "--out",
                      evenAfterInterrupt: Bool = false) throws(CLIFailure) {
        let file: PrivateFile
        do {
            file = try PrivateFile(creating: path, existing: replacing ? .replaceRegularFile : .refuse, publication: .whenCommitted)
        } catch {
            throw failure(error, option: option)
        }
        let interruptedBefore = evenAfterInterrupt && SignalHandling.shared.interruption != nil
        // After the first interrupt a second one ends the process at once (SignalHandling), and the
        // unnamed file it was writing goes with it.
        let cleanup: SignalHandling.Registration? = interruptedBefore ? nil : SignalHandling.shared.onInterruptCleanup { file.abandon() }
        defer {
            cleanup?.end()
            file.close()
        }
        do {
            try file.write(bytes)
            try file.commit()
        } catch {
            throw failure(error, option: option)
        }
    }

    static func write(_ bytes: [UInt8], to path: String, replacing: Bool, option: String = "--out",
                      evenAfterInterrupt: Bool = false) throws(CLIFailure) {
        let result = bytes.withUnsafeBytes { raw -> Result<Void, CLIFailure> in
            do throws(CLIFailure) {
                return .success(try write(raw, to: path, replacing: replacing, option: option, evenAfterInterrupt: evenAfterInterrupt))
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    static func directory(of path: String) -> String { PrivateFile.directoryPath(of: path) }

    /// The contract's kind and words for each refusal (docs/cli.md, "Exit codes").
    static func failure(_ error: PrivateFileError, option: String) -> CLIFailure {
        switch error {
        case .emptyPath:
            return CLIFailure(kind: .usage, message: "\(option) needs a file name")
        case .notARegularFile(let path, let kind):
            let example = kind == .directory ? " (for example \(path.hasSuffix("/") ? path : path + "/")\(option == "--out" ? "vault.json" : "capture.btsnoop"))" : ""
            return CLIFailure(kind: .usage, message: "\(option) \(path) is \(kind), not a regular file: give the name of a new file\(example)")
        case .exists(let path):
            if option == "--out" {
                return CLIFailure(kind: .usage, message: "\(path) exists: choose another --out, or add --force to replace it on success")
            }
            return CLIFailure(kind: .usage, message: "\(option) \(path) exists: choose another file name, or remove it first (hwprobe never overwrites it)")
        case .missingDirectory(let path, let directory):
            return CLIFailure(kind: .usage, message: "\(option) \(path): the directory \(directory) does not exist")
        case .notADirectory(let path, let directory):
            return CLIFailure(kind: .usage, message: "\(option) \(path): \(directory) is not a directory")
        case .permissionDenied(let path, let directory):
            return CLIFailure(kind: .permission, message: "\(option) \(path): no permission to write in \(directory)")
        case .readOnly(let path, let directory):
            return CLIFailure(kind: .permission, message: "\(option) \(path): \(directory) is on a read-only file system: choose a directory on a writable disk")
        case .takesNoFiles(let path, let directory):
            return CLIFailure(kind: .permission, message: "\(option) \(path): \(directory) takes no new files (a virtual file system?): choose a directory on a disk")
        case .noSpace(let path, let directory):
            return CLIFailure(kind: .device, message: "could not write \(path): no space left on the file system of \(directory): free some space or choose another \(option); nothing was written")
        case .abandoned(let path):
            return CLIFailure(kind: .cancelled, message: "cancelled: nothing was written to \(path)",
                              exitOverride: SignalHandling.shared.interruption.map(SignalHandling.exitCode(for:)))
        case .failed(let path, let reason):
            if reason.meansPermission {
                return CLIFailure(kind: .permission, message: "\(option) \(path): no permission to write it (\(reason))")
            }
            return CLIFailure(kind: .device, message: "could not write \(path): \(reason); nothing was written")
        }
    }
}

/// Every file one run will write, each under the option that names it: `--out`, `--record` (and
/// for `import` the frames beside it, `FILE.y4m`), each `--report`, `--btsnoop`.
///
/// Checked against each other before anything opens (issue 27): two options naming one file
/// (spelled alike, or the same file through `..`, a symbolic link or a hard link) would have
/// the later write replace or refuse the earlier one at the end of the run, losing a decrypted
/// vault to a report or turning a finished capture into exit 2. It is a usage error instead,
/// naming both options, before a device is touched.
enum OutputFiles {
    struct Named: Equatable, Sendable {
        /// How the person named it: `--out`, `--report junit:`, `--record (its frames)`.
        var option: String
        var path: String
    }

    static func named(in invocation: Invocation) -> [Named] {
        var files: [Named] = []
        if invocation.command == "import", let out = invocation.value("--out") { files.append(.init(option: "--out", path: out)) }
        if let record = invocation.value("--record") {
            files.append(.init(option: "--record", path: record))
            if invocation.command == "import" {
                files.append(.init(option: "--record (its frames file)", path: MediaCassettes.framesPath(for: record, index: 0)))
            }
        }
        for value in invocation.all("--report") {
            // A malformed --report is ReportTargets' to refuse, with its own words.
            guard let colon = value.firstIndex(of: ":"), ReportTargets.Format(rawValue: String(value[..<colon])) != nil else { continue }
            let path = String(value[value.index(after: colon)...])
            if !path.isEmpty { files.append(.init(option: "--report \(value[...colon])", path: path)) }
        }
        if let snoop = invocation.value("--btsnoop") { files.append(.init(option: "--btsnoop", path: snoop)) }
        return files
    }

    /// Throws a usage error (exit 2) naming both options when two name the same file.
    static func checkDistinct(_ invocation: Invocation) throws(CLIFailure) {
        let files = named(in: invocation)
        guard let (first, second) = PathIdentity.firstClash(among: files.map(\.path)) else { return }
        let a = files[first], b = files[second]
        let spelled = a.path == b.path ? a.path : "\(a.path) and \(b.path)"
        throw CLIFailure(kind: .usage, message: "\(a.option) and \(b.option) both name \(spelled): one would be written over the other; "
                         + "give each its own file")
    }
}
