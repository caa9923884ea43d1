import Flows
import LinuxIO

/// `import --password-file FILE` (docs/cli.md): any readable path (pipes and `/dev/fd/N`
/// included), or `-` for standard input's first line. At most 4 KiB: anything longer is not a
/// password file but a mistake. An empty password is a usage error here, before any scanning,
/// and never reaches the key derivation.
///
/// The password is read straight into a fixed ``SecretBytes`` buffer: never a `String`, never an
/// array that grows (each growth would leave the old buffer behind, unwiped).
enum PasswordFile {
    static let limit = 4096

    static func read(_ path: String) throws(CLIFailure) -> SecretBytes {
        let fd: FileDescriptor
        if path == "-" {
            fd = .standardInput
        } else {
            do { fd = try FileDescriptor.open(path, .readOnly) } catch {
                if error.meansPermission {
                    throw CLIFailure(kind: .permission, message: "no permission to read the password file \(path)")
                }
                throw CLIFailure(kind: .usage, message: "cannot read the password file \(path): \(error)")
            }
        }
        defer { if path != "-" { fd.close() } }
        // One byte more than the limit, to tell "exactly 4 KiB" from "longer".
        let bytes = SecretBytes(capacity: limit + 1)
        // Standard input: stop at the first line's end, leaving the rest unread.
        let firstLineOnly = path == "-"
        var failure: Errno?
        var ended = false
        while !ended, bytes.count <= limit {
            let wanted = firstLineOnly ? 1 : limit + 1 - bytes.count
            do throws(Errno) {
                let count = try bytes.appendInPlace(upTo: wanted) { raw throws(Errno) in try fd.read(into: raw) }
                if count == 0 { ended = true }
            } catch {
                failure = error
                break
            }
            if firstLineOnly, bytes.last == 0x0A { ended = true }
        }
        if let failure {
            bytes.wipe()
            throw CLIFailure(kind: .usage, message: "cannot read the password file \(path): \(failure)")
        }
        guard bytes.count <= limit else {
            bytes.wipe()
            throw CLIFailure(kind: .usage, message: "the password file \(path) is longer than 4 KiB: give a file holding just the password")
        }
        if bytes.last == 0x0A {
            bytes.removeLast()
            if bytes.last == 0x0D { bytes.removeLast() }
        }
        guard !bytes.isEmpty else {
            throw CLIFailure(kind: .usage, message: "the password file \(path) is empty: put the backup's password in it")
        }
        return bytes
    }
}
