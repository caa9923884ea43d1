import Glibc
import LinuxIO

/// `import --password-file FILE` (hwprobe-cli.md): any readable path (pipes and `/dev/fd/N`
/// included), or `-` for standard input's first line. At most 4 KiB: anything longer is not a
/// password file but a mistake. An empty password is a usage error here, before any scanning,
/// and never reaches the key derivation.
enum PasswordFile {
    static let limit = 4096

    static func read(_ path: String) throws(CLIFailure) -> String {
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
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        defer { chunk.overwriteWithZerosInPlace() }
        // Standard input: stop at the first line's end, leaving the rest unread.
        let firstLineOnly = path == "-"
        while bytes.count <= limit {
            let wanted = firstLineOnly ? 1 : chunk.count
            let count: Int
            do { count = try chunk.withUnsafeMutableBytes { raw throws(Errno) in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<wanted])) } } catch {
                bytes.overwriteWithZerosInPlace()
                throw CLIFailure(kind: .usage, message: "cannot read the password file \(path): \(error)")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if firstLineOnly, bytes.last == 0x0A { break }
        }
        defer { bytes.overwriteWithZerosInPlace() }
        guard bytes.count <= limit else {
            throw CLIFailure(kind: .usage, message: "the password file \(path) is longer than 4 KiB: give a file holding just the password")
        }
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A {
            end -= 1
            if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        }
        guard end > 0 else {
            throw CLIFailure(kind: .usage, message: "the password file \(path) is empty: put the backup's password in it")
        }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }
}
