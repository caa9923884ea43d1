import Glibc
import Testing
@testable import LinuxIO

/// Errno carries the kernel's code and words, groups the codes that mean an unplugged device or a
/// refused permission, and `check` turns the shims' `-errno` returns into a thrown Errno.
@Suite struct ErrnoTests {
    @Test func theDescriptionIsTheKernelsWords() {
        #expect(Errno.noEntry.description == "No such file or directory")
        #expect(Errno.accessDenied.description == "Permission denied")
        #expect(Errno(ENOTTY).description == String(cString: strerror(ENOTTY)))
        // An unknown code still says which it was (glibc's "Unknown error N").
        #expect(Errno(4321).description.contains("4321"))
        #expect("\(Errno.busy)" == "Device or resource busy", "interpolation quotes the words")
    }

    @Test func theNamedCodesAreTheCConstants() {
        let named: [(Errno, Int32)] = [
            (.noEntry, ENOENT), (.accessDenied, EACCES), (.notPermitted, EPERM), (.busy, EBUSY), (.noDevice, ENODEV),
            (.noSuchDeviceOrAddress, ENXIO), (.familyNotSupported, EAFNOSUPPORT), (.protocolNotSupported, EPROTONOSUPPORT),
            (.notTTY, ENOTTY), (.invalid, EINVAL), (.wouldBlock, EAGAIN), (.interrupted, EINTR), (.ioError, EIO),
        ]
        for (error, code) in named { #expect(error.code == code, "\(error)") }
        #expect(Errno(EAGAIN) == Errno(EWOULDBLOCK), "one code on Linux")
    }

    @Test(arguments: [ENODEV, ENXIO, ESHUTDOWN])
    func meansDeviceGone(code: Int32) {
        #expect(Errno(code).meansDeviceGone)
        #expect(!Errno(code).meansPermission)
    }

    @Test(arguments: [EACCES, EPERM])
    func meansPermission(code: Int32) {
        #expect(Errno(code).meansPermission)
        #expect(!Errno(code).meansDeviceGone)
    }

    @Test(arguments: [ENOENT, EIO, EBUSY, EINVAL, EAGAIN, EINTR, ENOTTY, EBADF])
    func meansNeither(code: Int32) {
        #expect(!Errno(code).meansDeviceGone && !Errno(code).meansPermission, "\(Errno(code))")
    }

    @Test func currentIsTheThreadsErrnoNow() {
        errno = EBUSY
        #expect(Errno.current == .busy)
        // A real failure sets it.
        #expect(close(-1) == -1)
        #expect(Errno.current == Errno(EBADF))
    }

    /// The shims return `-errno` on failure, so `check(-1)` is EPERM (errno 1), not errno as it
    /// stands: the shim already read errno for us.
    @Test func checkThrowsTheNegatedCodeAndPassesTheRest() throws {
        #expect(try check(0) == 0)
        #expect(try check(7) == 7)
        #expect(throws: Errno.noEntry) { try check(-ENOENT) }
        #expect(throws: Errno.notPermitted) { try check(-1) }
        errno = EBUSY
        #expect(throws: Errno.ioError, "errno as it stands plays no part") { try check(-EIO) }
        #expect(Errno(negated: -ENODEV) == .noDevice)
    }
}
