import CLinuxShims
import Glibc
import Synchronization

/// A file that may carry personal data (a decrypted vault, a Bluetooth capture, a cassette, a
/// report), written the way a trusted tool writes one (issue 15): mode 0600, never through a
/// symbolic link, never over something it should not replace, and never half there.
///
/// - Only an absent path, or a regular file when replacing was asked for, is ever written. A
///   device, FIFO, socket, directory or symbolic link is refused whatever the flags, because
///   writing "through" one puts the bytes somewhere the person did not name (`/dev/stdout`) or
///   replaces something that is not a file (`/dev/null`, as root).
/// - The bytes go into an unnamed file (`O_TMPFILE`) that gets its name only when it is complete,
///   so no named temporary can be left behind by a crash, a full disk or SIGKILL. Where the file
///   system has no `O_TMPFILE`, a 0600 `O_EXCL` temporary is used and ``abandon()`` removes it
///   (hwprobe calls that on SIGTERM, SIGHUP and SIGINT too).
/// - Publishing never replaces what it must not, even if the path changed after the check: a
///   new file gets its name with `linkat` or `renameat2(RENAME_NOREPLACE)`, which fail if anything
///   at all is there; replacing swaps the two atomically (`RENAME_EXCHANGE`) and swaps back if
///   what came out is not a regular file.
/// - The file is fsynced before it gets its name and the directory after, so after a power cut
///   the path holds either the old content or the whole new one.
///
/// Two ways to publish: ``Publication/whenCommitted`` (the plaintext: all or nothing) and
/// ``Publication/atOnce`` (a capture that grows while it is written, there from its first byte so
/// that a crash still leaves a readable file).
package final class PrivateFile: Sendable {
    package enum Existing: Sendable, Hashable {
        /// Anything at the path is refused (`--btsnoop`, `--out` without `--force`).
        case refuse
        /// A regular file at the path is replaced, atomically; anything else is refused.
        case replaceRegularFile
    }

    package enum Publication: Sendable, Hashable {
        /// The path shows the file only once ``commit()`` succeeds.
        case whenCommitted
        /// The path shows the (empty) file as soon as it is created; ``close()`` syncs it.
        case atOnce
    }

    package let path: String
    package let existing: Existing
    private let directory: FileDescriptor
    private let name: String
    private let descriptor: FileDescriptor
    private let state: Mutex<State>

    private struct State {
        var phase = Phase.writing
        /// The named temporary where there is one: the fallback without O_TMPFILE, or an unnamed
        /// file linked under a temporary name on its way to replace an existing one.
        var temporaryName: String?
        var descriptorOpen = true
    }

    private enum Phase: Equatable { case writing, published, abandoned }

    /// The file's kind at a path, as the refusals name it.
    package enum Kind: String, Sendable, Hashable, CustomStringConvertible {
        case regularFile = "a regular file"
        case directory = "a directory"
        case symbolicLink = "a symbolic link"
        case characterDevice = "a character device"
        case blockDevice = "a block device"
        case fifo = "a FIFO"
        case socket = "a socket"
        case other = "not a regular file"

        init(_ type: UInt32) {
            self = switch type {
            case HAL_FILE_REGULAR: .regularFile
            case HAL_FILE_DIRECTORY: .directory
            case HAL_FILE_SYMLINK: .symbolicLink
            case HAL_FILE_CHARACTER_DEVICE: .characterDevice
            case HAL_FILE_BLOCK_DEVICE: .blockDevice
            case HAL_FILE_FIFO: .fifo
            case HAL_FILE_SOCKET: .socket
            default: .other
            }
        }

        package var description: String { rawValue }
    }

    // MARK: Checking

    /// Everything that can be known before the bytes exist: the path names an absent entry (or a
    /// regular file we may replace) in a directory that takes new files. Creates nothing named.
    package static func check(_ path: String, existing: Existing) throws(PrivateFileError) {
        let (directoryPath, _) = try split(path)
        var info = hal_file_info()
        let rc = hal_lstat(path, &info)
        if rc == 0 {
            try admit(Kind(info.type), at: path, existing: existing)
        } else if -rc == ENOTDIR {
            throw .notADirectory(path: path, directory: directoryPath)
        } else if -rc != ENOENT {
            throw PrivateFileError(Errno(-rc), path: path, directory: directoryPath)
        }
        let directory = try openDirectory(directoryPath, for: path)
        defer { directory.close() }
        // An unnamed file proves the directory takes new files (permission bits alone do not
        // tell: root, read-only mounts, /proc, ACLs) and leaves no trace.
        let probe = hal_open_unnamed(directory.rawValue)
        if probe >= 0 {
            Glibc.close(probe)
            return
        }
        guard Self.lacksUnnamedFiles(-probe) else { throw PrivateFileError(Errno(-probe), path: path, directory: directoryPath) }
        let probeName = ".hwprobe-check.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = hal_create_exclusive(directory.rawValue, probeName)
        guard fd >= 0 else {
            var isDirectory = hal_file_info()
            // ENOENT for a directory that is there: a file system that takes no new files (/proc, /sys).
            if -fd == ENOENT, hal_fstat(directory.rawValue, &isDirectory) == 0, isDirectory.type == HAL_FILE_DIRECTORY {
                throw .takesNoFiles(path: path, directory: directoryPath)
            }
            throw PrivateFileError(Errno(-fd), path: path, directory: directoryPath)
        }
        Glibc.close(fd)
        _ = hal_unlinkat(directory.rawValue, probeName)
    }

    // MARK: Writing

    /// Opens the file to write. With ``Publication/atOnce`` it is at `path` when this returns.
    package convenience init(creating path: String, existing: Existing, publication: Publication) throws(PrivateFileError) {
        try self.init(creating: path, existing: existing, publication: publication, unnamedFiles: true)
    }

    /// `unnamedFiles: false` takes the path of a file system without O_TMPFILE (for tests).
    init(creating path: String, existing: Existing, publication: Publication, unnamedFiles: Bool) throws(PrivateFileError) {
        let (directoryPath, name) = try Self.split(path)
        var info = hal_file_info()
        if hal_lstat(path, &info) == 0 { try Self.admit(Kind(info.type), at: path, existing: existing) }
        let directory = try Self.openDirectory(directoryPath, for: path)
        Self.removeStaleTemporaries(of: name, in: directory, at: directoryPath)
        var temporaryName: String?
        var fd = unnamedFiles ? hal_open_unnamed(directory.rawValue) : -EOPNOTSUPP
        if fd < 0, Self.lacksUnnamedFiles(-fd) {
            let temporary = Self.temporaryName(for: name)
            fd = hal_create_exclusive(directory.rawValue, temporary)
            if fd >= 0 { temporaryName = temporary }
        }
        guard fd >= 0 else {
            directory.close()
            throw PrivateFileError(Errno(-fd), path: path, directory: directoryPath)
        }
        self.path = path
        self.existing = existing
        self.directory = directory
        self.name = name
        descriptor = FileDescriptor(rawValue: fd)
        state = Mutex(State(temporaryName: temporaryName))
        if publication == .atOnce {
            do throws(PrivateFileError) { try publish() } catch {
                abandon()
                close()
                throw error
            }
        }
    }

    deinit {
        abandon()
        close()
        directory.close()
    }

    /// Appends bytes. A full disk is ``PrivateFileError/noSpace(path:directory:)``.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(PrivateFileError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let rc = hal_write_all(descriptor.rawValue, base, bytes.count)
        if rc < 0 { throw PrivateFileError(Errno(Int32(-rc)), path: path, directory: Self.directoryPath(of: path)) }
    }

    package func write(_ bytes: [UInt8]) throws(PrivateFileError) {
        // Array's withUnsafeBytes rethrows untyped errors: carry the typed one out as a value.
        let result = bytes.withUnsafeBytes { raw -> Result<Void, PrivateFileError> in
            do throws(PrivateFileError) { return .success(try write(raw)) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Syncs the file, gives it its name (``Publication/whenCommitted``), syncs the directory and
    /// closes. After ``abandon()`` (an interrupt) it publishes nothing and throws
    /// ``PrivateFileError/abandoned(path:)``.
    package func commit() throws(PrivateFileError) {
        let synced = hal_fsync(descriptor.rawValue)
        if synced < 0 {
            abandon()
            throw PrivateFileError(Errno(-synced), path: path, directory: Self.directoryPath(of: path))
        }
        let published = state.withLock { $0.phase == .published }
        if !published {
            do throws(PrivateFileError) { try publish() } catch {
                abandon()
                throw error
            }
        }
        close()
    }

    /// Nothing of this file is to be kept: a named temporary is removed at once and a later
    /// ``commit()`` publishes nothing. Idempotent, and safe from another thread while the owner
    /// writes (the descriptor stays open until the owner closes it). Does nothing once published.
    package func abandon() {
        let temporary = state.withLock { s -> String? in
            guard s.phase == .writing else { return nil }
            s.phase = .abandoned
            defer { s.temporaryName = nil }
            return s.temporaryName
        }
        if let temporary { _ = hal_unlinkat(directory.rawValue, temporary) }
    }

    /// Closes the descriptor (a file published ``Publication/atOnce`` is synced first). A file
    /// never committed is abandoned. Idempotent.
    package func close() {
        let (open, published) = state.withLock { s -> (Bool, Bool) in
            defer { s.descriptorOpen = false }
            return (s.descriptorOpen, s.phase == .published)
        }
        guard open else { return }
        if published { _ = hal_fsync(descriptor.rawValue) } else { abandon() }
        descriptor.close()
    }

    /// The path holds this file now.
    package var isPublished: Bool { state.withLock { $0.phase == .published } }

    /// Cuts the file back to `length` bytes: a capture whose last write failed halfway keeps
    /// only its whole records, never a record cut short that a reader would take for damage.
    package func truncate(to length: Int) throws(PrivateFileError) {
        let rc = hal_ftruncate(descriptor.rawValue, Int64(length))
        if rc < 0 { throw PrivateFileError(Errno(-rc), path: path, directory: Self.directoryPath(of: path)) }
    }

    /// Takes a file published at once (``Publication/atOnce``) off its path again, if the path
    /// still names this file: a capture that could not even take its header is not left behind
    /// as an empty file. Does nothing for a file not published.
    package func unpublish() {
        guard isPublished else { return }
        var mine = hal_file_info()
        var there = hal_file_info()
        guard hal_fstat(descriptor.rawValue, &mine) == 0, hal_fstatat_nofollow(directory.rawValue, name, &there) == 0,
              mine.device == there.device, mine.inode == there.inode else { return }
        _ = hal_unlinkat(directory.rawValue, name)
    }

    // MARK: Publishing

    private func publish() throws(PrivateFileError) {
        let directoryPath = Self.directoryPath(of: path)
        try state.withLock { s throws(PrivateFileError) in
            guard s.phase == .writing else { throw .abandoned(path: path) }
            if s.temporaryName == nil {
                let rc = hal_link_unnamed(descriptor.rawValue, directory.rawValue, name)
                if rc == 0 {
                    s.phase = .published
                    return
                }
                guard -rc == EEXIST, existing == .replaceRegularFile else {
                    throw -rc == EEXIST ? refusal() : PrivateFileError(Errno(-rc), path: path, directory: directoryPath)
                }
                // A regular file we may replace (or was that something else?): give ours a
                // temporary name, then swap.
                let temporary = Self.temporaryName(for: name)
                let linked = hal_link_unnamed(descriptor.rawValue, directory.rawValue, temporary)
                guard linked == 0 else { throw PrivateFileError(Errno(-linked), path: path, directory: directoryPath) }
                s.temporaryName = temporary
            }
            guard let temporary = s.temporaryName else { return }
            defer { s.temporaryName = nil }
            try place(temporary)
            s.phase = .published
        }
        // The new name is on disk only once the directory is.
        let synced = hal_fsync(directory.rawValue)
        if synced < 0 { throw PrivateFileError(Errno(-synced), path: path, directory: directoryPath) }
    }

    /// Moves the named temporary to the final name: without replacing anything, or replacing
    /// only a regular file. On every way out the temporary is gone, except the one where what
    /// it holds is someone else's and could not be put back (then the error says so).
    private func place(_ temporary: String) throws(PrivateFileError) {
        let dir = directory.rawValue
        let directoryPath = Self.directoryPath(of: path)
        func discard(_ error: PrivateFileError) -> PrivateFileError {
            _ = hal_unlinkat(dir, temporary)
            return error
        }
        func unsupported(_ rc: Int32) -> Bool { -rc == EINVAL || -rc == ENOSYS }
        // A few rounds: under a racer the name may appear and vanish between two steps.
        for _ in 0..<4 {
            let moved = hal_renameat2(dir, temporary, dir, name, HAL_RENAME_NOREPLACE)
            if moved == 0 { return }
            if unsupported(moved) { return try placeWithoutRenameat2(temporary) }
            guard -moved == EEXIST else { throw discard(PrivateFileError(Errno(-moved), path: path, directory: directoryPath)) }
            guard existing == .replaceRegularFile else { throw discard(refusal()) }
            // Swap, then look at what came out: only a regular file may stay replaced.
            let swapped = hal_renameat2(dir, temporary, dir, name, HAL_RENAME_EXCHANGE)
            if -swapped == ENOENT { continue } // gone meanwhile: the no-replace move again
            if unsupported(swapped) { return try placeWithoutRenameat2(temporary) }
            guard swapped == 0 else { throw discard(PrivateFileError(Errno(-swapped), path: path, directory: directoryPath)) }
            var old = hal_file_info()
            let looked = hal_fstatat_nofollow(dir, temporary, &old)
            if looked == 0, old.type == HAL_FILE_REGULAR {
                _ = hal_unlinkat(dir, temporary)
                return
            }
            // Not ours to replace: put it back, and take ours away.
            let kind = looked == 0 ? Kind(old.type) : .other
            guard hal_renameat2(dir, temporary, dir, name, HAL_RENAME_EXCHANGE) == 0 else {
                throw .failed(path: path, reason: Errno(EAGAIN))
            }
            throw discard(.notARegularFile(path: path, kind: kind))
        }
        throw discard(.failed(path: path, reason: Errno(EAGAIN)))
    }

    /// File systems without renameat2's flags: link(2) never replaces (then the temporary goes);
    /// a replacement is a plain rename after a last look.
    private func placeWithoutRenameat2(_ temporary: String) throws(PrivateFileError) {
        let dir = directory.rawValue
        func discard(_ error: PrivateFileError) -> PrivateFileError {
            _ = hal_unlinkat(dir, temporary)
            return error
        }
        let linked = hal_linkat(dir, temporary, dir, name)
        if linked == 0 {
            _ = hal_unlinkat(dir, temporary)
            return
        }
        guard -linked == EEXIST else {
            throw discard(PrivateFileError(Errno(-linked), path: path, directory: Self.directoryPath(of: path)))
        }
        guard existing == .replaceRegularFile else { throw discard(refusal()) }
        var info = hal_file_info()
        if hal_fstatat_nofollow(dir, name, &info) == 0, info.type != HAL_FILE_REGULAR {
            throw discard(.notARegularFile(path: path, kind: Kind(info.type)))
        }
        let renamed = hal_renameat(dir, temporary, dir, name)
        guard renamed == 0 else { throw discard(PrivateFileError(Errno(-renamed), path: path, directory: Self.directoryPath(of: path))) }
    }

    /// Why what stands at the name now may not be replaced.
    private func refusal() -> PrivateFileError {
        var info = hal_file_info()
        guard hal_fstatat_nofollow(directory.rawValue, name, &info) == 0, info.type != HAL_FILE_REGULAR else {
            return .exists(path: path)
        }
        return .notARegularFile(path: path, kind: Kind(info.type))
    }

    // MARK: Helpers

    private static func admit(_ kind: Kind, at path: String, existing: Existing) throws(PrivateFileError) {
        guard kind == .regularFile else { throw .notARegularFile(path: path, kind: kind) }
        guard existing == .replaceRegularFile else { throw .exists(path: path) }
    }

    private static func lacksUnnamedFiles(_ code: Int32) -> Bool {
        code == EOPNOTSUPP || code == EISDIR || code == EINVAL || code == ENOSYS
    }

    private static func openDirectory(_ directoryPath: String, for path: String) throws(PrivateFileError) -> FileDescriptor {
        let fd = hal_open_directory(directoryPath)
        guard fd >= 0 else {
            if -fd == ENOENT { throw .missingDirectory(path: path, directory: directoryPath) }
            if -fd == ENOTDIR { throw .notADirectory(path: path, directory: directoryPath) }
            throw PrivateFileError(Errno(-fd), path: path, directory: directoryPath)
        }
        return FileDescriptor(rawValue: fd)
    }

    /// A hidden name beside the target, unique to this process and attempt.
    private static func temporaryName(for name: String) -> String {
        ".\(name.prefix(200)).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).hwprobe-tmp"
    }

    /// The process that made a temporary named by ``temporaryName(for:)`` for `name`, or nil when
    /// `entry` is not one.
    static func temporaryOwner(_ entry: String, for name: String) -> Int32? {
        let prefix = ".\(name.prefix(200))."
        let suffix = ".hwprobe-tmp"
        guard entry.hasPrefix(prefix), entry.hasSuffix(suffix), entry.count > prefix.count + suffix.count else { return nil }
        let middle = entry.dropFirst(prefix.count).dropLast(suffix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard middle.count == 2, let pid = Int32(middle[0]), pid > 0, UInt32(middle[1]) != nil else { return nil }
        return pid
    }

    /// Removes what a killed run left beside `name`: a kill (SIGKILL, a power cut) between naming
    /// the temporary and moving it into place leaves `.NAME.PID.N.hwprobe-tmp` with the whole new
    /// content, a plaintext vault perhaps, which nothing else would ever remove. Only a regular
    /// file of ours (same owner), mode 0600, whose process is gone, is removed.
    private static func removeStaleTemporaries(of name: String, in directory: FileDescriptor, at directoryPath: String) {
        // Listed through the directory already open (no second open by path, which could name
        // another directory by now).
        var buffer = [CChar](repeating: 0, count: 64 * 1024)
        let used = buffer.withUnsafeMutableBufferPointer { raw in
            hal_directory_names(directory.rawValue, ".\(name.prefix(200)).", raw.baseAddress, UInt(raw.count))
        }
        guard used > 0 else { return }
        let entries = buffer[..<Int(used)].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        for entry in entries {
            guard let pid = temporaryOwner(entry, for: name), pid != getpid(), hal_process_exists(pid) == 0 else { continue }
            var info = hal_file_info()
            guard hal_fstatat_nofollow(directory.rawValue, entry, &info) == 0, info.type == HAL_FILE_REGULAR,
                  info.owner == geteuid(), info.mode & 0o077 == 0 else { continue }
            _ = hal_unlinkat(directory.rawValue, entry)
        }
    }

    /// The directory part of `path` ("." for a bare name, "/" for a name at the root).
    package static func directoryPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = path[..<slash]
        return directory.isEmpty ? "/" : String(directory)
    }

    private static func split(_ path: String) throws(PrivateFileError) -> (directory: String, name: String) {
        guard !path.isEmpty else { throw .emptyPath }
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, name != ".", name != ".." else { throw .notARegularFile(path: path, kind: .directory) }
        return (directoryPath(of: path), name)
    }
}

/// Why a private file could not be checked, created or published. The CLI turns each into the
/// contract's kind (a path the person typed wrong is `usage`, permission is `permission`).
package enum PrivateFileError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyPath
    /// A device, FIFO, socket, directory or symbolic link is there.
    case notARegularFile(path: String, kind: PrivateFile.Kind)
    /// A regular file is there and replacing was not asked for.
    case exists(path: String)
    case missingDirectory(path: String, directory: String)
    case notADirectory(path: String, directory: String)
    case permissionDenied(path: String, directory: String)
    case readOnly(path: String, directory: String)
    /// The directory is on a file system that takes no files (/proc, /sys).
    case takesNoFiles(path: String, directory: String)
    case noSpace(path: String, directory: String)
    /// Abandoned (an interrupt) before it was published: nothing was written.
    case abandoned(path: String)
    case failed(path: String, reason: Errno)

    init(_ errno: Errno, path: String, directory: String) {
        switch errno.code {
        case ENOENT: self = .missingDirectory(path: path, directory: directory)
        case ENOTDIR: self = .notADirectory(path: path, directory: directory)
        case EACCES, EPERM: self = .permissionDenied(path: path, directory: directory)
        case EROFS: self = .readOnly(path: path, directory: directory)
        case ENOSPC, EDQUOT: self = .noSpace(path: path, directory: directory)
        default: self = .failed(path: path, reason: errno)
        }
    }

    package var description: String {
        switch self {
        case .emptyPath: "no file name given"
        case .notARegularFile(let path, let kind): "\(path) is \(kind), not a regular file"
        case .exists(let path): "\(path) exists"
        case .missingDirectory(_, let directory): "the directory \(directory) does not exist"
        case .notADirectory(_, let directory): "\(directory) is not a directory"
        case .permissionDenied(_, let directory): "no permission to write in \(directory)"
        case .readOnly(_, let directory): "\(directory) is on a read-only file system"
        case .takesNoFiles(_, let directory): "\(directory) takes no new files (a virtual file system?)"
        case .noSpace(_, let directory): "no space left on the file system of \(directory)"
        case .abandoned(let path): "\(path) was not written (interrupted)"
        case .failed(let path, let reason): "cannot write \(path): \(reason)"
        }
    }
}
