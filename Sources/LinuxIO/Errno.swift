import Glibc

/// A failed system call's errno, with the kernel's words for it.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) { self.code = code }

    /// From a shim's negative return value.
    init(negated rc: Int32) { code = -rc }

    public static var current: Errno { Errno(errno) }

    public var description: String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    public static let noEntry = Errno(ENOENT)
    public static let accessDenied = Errno(EACCES)
    public static let notPermitted = Errno(EPERM)
    public static let busy = Errno(EBUSY)
    public static let noDevice = Errno(ENODEV)
    public static let noSuchDeviceOrAddress = Errno(ENXIO)
    public static let familyNotSupported = Errno(EAFNOSUPPORT)
    public static let protocolNotSupported = Errno(EPROTONOSUPPORT)
    public static let notTTY = Errno(ENOTTY)
    public static let invalid = Errno(EINVAL)
    public static let wouldBlock = Errno(EAGAIN)
    public static let interrupted = Errno(EINTR)
    public static let ioError = Errno(EIO)

    /// Device gone: what the kernel says once a USB camera or pad is unplugged.
    public var meansDeviceGone: Bool { [ENODEV, ENXIO, ESHUTDOWN].contains(code) }
    public var meansPermission: Bool { code == EACCES || code == EPERM }
}

/// Turns a shim's `rc < 0 ? -errno : rc` convention into a typed result.
@inline(__always)
public func check(_ rc: Int32) throws(Errno) -> Int32 {
    if rc < 0 { throw Errno(negated: rc) }
    return rc
}
