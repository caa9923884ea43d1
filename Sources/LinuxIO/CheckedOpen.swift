import CLinuxShims
import Glibc

/// What a path given for reading must turn out to be.
package enum ExpectedFile: Sendable, Hashable {
    /// A regular file: a `.y4m` video, a cassette, its frames. `orPipe` also takes an anonymous
    /// pipe (a shell's `|`, as `/dev/stdin` or `/dev/fd/N`), read as a stream; a named FIFO never.
    case regularFile(orPipe: Bool)
    /// A character device: a camera, a pad, a serial port.
    case characterDevice
}

/// Why a file a command reads was not opened.
package enum CheckedOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// open(2) failed: ENOENT, EACCES … (and ENXIO for a socket, which open cannot open).
    case failed(path: String, Errno)
    /// It opened, but is not what it must be: a FIFO, a directory, a socket, a device where a
    /// file belongs, or a file where a device does.
    case wrongKind(path: String, found: PrivateFile.Kind, expected: ExpectedFile)

    package var description: String {
        switch self {
        case .failed(let path, let errno): "cannot open \(path): \(errno)"
        case .wrongKind(let path, let found, let expected):
            switch expected {
            case .regularFile(let orPipe):
                "\(path) is \(found), not a regular file: give the path of a file" + (orPipe ? " (a pipe is read through /dev/stdin)" : "")
            case .characterDevice:
                "\(path) is \(found), not a device node: give a device's path under /dev"
            }
        }
    }
}

extension FileDescriptor {
    /// Opens a file a command will read so that opening can never hang, then checks it is what
    /// it must be before a byte is read (issue 27): `open(2)` of a FIFO waits for a writer with
    /// no deadline and no way for a signal to end it, and a FIFO, a directory or a socket where a
    /// file belongs would then hang or fail in a way that names nothing. Opened with O_NONBLOCK,
    /// which cannot block; a regular file or an anonymous pipe that is taken gets blocking reads
    /// back (a reader of a file waits for its bytes), a device keeps O_NONBLOCK (its readers poll).
    package static func openChecked(_ path: String, expecting expected: ExpectedFile,
                                    access: Access = .readOnly) throws(CheckedOpenError) -> FileDescriptor {
        let fd: FileDescriptor
        do { fd = try open(path, access, nonBlocking: true) } catch {
            // A socket cannot be opened at all (ENXIO): name what is there instead of the errno.
            var info = hal_file_info()
            if error == .noSuchDeviceOrAddress, hal_stat(path, &info) == 0, info.type == HAL_FILE_SOCKET {
                throw .wrongKind(path: path, found: .socket, expected: expected)
            }
            throw .failed(path: path, error)
        }
        var info = hal_file_info()
        guard hal_fstat(fd.rawValue, &info) == 0 else {
            let error = Errno.current
            fd.close()
            throw .failed(path: path, error)
        }
        let kind = PrivateFile.Kind(info.type)
        let accepted: Bool
        switch expected {
        case .regularFile(let orPipe):
            accepted = kind == .regularFile || (orPipe && kind == .fifo && hal_is_anonymous_pipe(fd.rawValue) == 1)
        case .characterDevice:
            accepted = kind == .characterDevice
        }
        guard accepted else {
            fd.close()
            throw .wrongKind(path: path, found: kind, expected: expected)
        }
        if case .regularFile = expected {
            do { try fd.setBlocking() } catch {
                fd.close()
                throw .failed(path: path, error)
            }
        }
        return fd
    }

    /// What is open on this descriptor (a pipe cannot be read twice), or nil when fstat fails.
    package var kind: PrivateFile.Kind? {
        var info = hal_file_info()
        return hal_fstat(rawValue, &info) == 0 ? PrivateFile.Kind(info.type) : nil
    }

    /// Clears O_NONBLOCK: reads wait for bytes again.
    package func setBlocking() throws(Errno) {
        let flags = fcntl(rawValue, F_GETFL)
        if flags < 0 || fcntl(rawValue, F_SETFL, flags & ~O_NONBLOCK) < 0 { throw Errno.current }
    }
}

extension CheckedOpenError {
    /// True when the path opened but named the wrong kind of file.
    package var isWrongKind: Bool {
        if case .wrongKind = self { true } else { false }
    }
}
