import Glibc
import Testing
@testable import LinuxIO

/// The named codes added for sockets, paths and disks are glibc's constants, each distinct, so
/// a `catch Errno.brokenPipe` matches exactly what the kernel says and nothing else.
@Suite struct ErrnoNamedCodesTests {
    static let named: [(name: String, error: Errno, code: Int32)] = [
        ("brokenPipe", .brokenPipe, EPIPE), ("shutDown", .shutDown, ESHUTDOWN), ("networkDown", .networkDown, ENETDOWN),
        ("connectionReset", .connectionReset, ECONNRESET), ("connectionAborted", .connectionAborted, ECONNABORTED),
        ("connectionRefused", .connectionRefused, ECONNREFUSED), ("notConnected", .notConnected, ENOTCONN),
        ("alreadyInProgress", .alreadyInProgress, EALREADY), ("notADirectory", .notADirectory, ENOTDIR),
        ("isADirectory", .isADirectory, EISDIR), ("exists", .exists, EEXIST), ("badDescriptor", .badDescriptor, EBADF),
        ("noSpace", .noSpace, ENOSPC),
    ]

    @Test func eachIsTheGlibcConstant() {
        for entry in Self.named {
            #expect(entry.error.code == entry.code, "\(entry.name)")
            #expect(entry.error == Errno(entry.code), "\(entry.name)")
            #expect(entry.error.description == String(cString: strerror(entry.code)), "\(entry.name)")
        }
    }

    @Test func theyAreDistinct() {
        #expect(Set(Self.named.map(\.error)).count == Self.named.count)
    }

    /// ESHUTDOWN is the one of them an unplugged device gives; the rest are not "device gone".
    @Test func onlyShutDownMeansDeviceGone() {
        for entry in Self.named {
            #expect(entry.error.meansDeviceGone == (entry.code == ESHUTDOWN), "\(entry.name)")
            #expect(!entry.error.meansPermission, "\(entry.name)")
        }
    }
}
