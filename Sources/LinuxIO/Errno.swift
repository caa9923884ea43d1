import Glibc

/// A failed system call's errno, with the kernel's words for it.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw errno value, for comparing with the C constants.
    public let code: Int32

    /// Wraps a raw errno value (from a C API that reports it some other way).
    public init(_ code: Int32) { self.code = code }

    /// From a shim's negative return value.
    init(negated rc: Int32) { code = -rc }

    /// The calling thread's errno now: read it straight after the failed call.
    public static var current: Errno { Errno(errno) }

    /// The kernel's words (strerror), which error messages quote so a person can look them up.
    public var description: String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    /// ENOENT: the path does not exist (a device unplugged before it was opened).
    public static let noEntry = Errno(ENOENT)
    /// EACCES: the node's permissions refuse this user (a udev rule or group is missing).
    public static let accessDenied = Errno(EACCES)
    /// EPERM: the operation needs a capability (CAP_NET_ADMIN for the HCI user channel).
    public static let notPermitted = Errno(EPERM)
    /// EBUSY: another process holds the device (bluetoothd on the controller, a camera in use).
    public static let busy = Errno(EBUSY)
    /// ENODEV: the device went away, or the node names no device.
    public static let noDevice = Errno(ENODEV)
    /// ENXIO: no device behind the node, or an index past the last one.
    public static let noSuchDeviceOrAddress = Errno(ENXIO)
    /// EAFNOSUPPORT: the kernel has no Bluetooth socket family (module not loaded).
    public static let familyNotSupported = Errno(EAFNOSUPPORT)
    /// EPROTONOSUPPORT: the socket protocol is missing from this kernel.
    public static let protocolNotSupported = Errno(EPROTONOSUPPORT)
    /// ENOTTY: the ioctl is not one this node answers (not a terminal, not a V4L2 device).
    public static let notTTY = Errno(ENOTTY)
    /// EINVAL: the kernel refused an argument (an unsupported format, a bad request).
    public static let invalid = Errno(EINVAL)
    /// EAGAIN: a non-blocking descriptor has nothing to give or no room to take; poll and retry.
    public static let wouldBlock = Errno(EAGAIN)
    /// EINTR: a signal arrived during the call; the call is retried, never reported.
    public static let interrupted = Errno(EINTR)
    /// EIO: the device failed the transfer (often a device being unplugged).
    public static let ioError = Errno(EIO)

    /// EPIPE: the other end is gone (a closed socket, an unregistered HCI controller's channel).
    public static let brokenPipe = Errno(EPIPE)
    /// ESHUTDOWN: the endpoint was shut down (a USB device mid-unplug).
    public static let shutDown = Errno(ESHUTDOWN)
    /// ENETDOWN: the network device (an HCI controller) went down.
    public static let networkDown = Errno(ENETDOWN)
    /// ECONNRESET: the peer reset the connection.
    public static let connectionReset = Errno(ECONNRESET)
    /// ECONNABORTED: the connection was aborted on this side.
    public static let connectionAborted = Errno(ECONNABORTED)
    /// ECONNREFUSED: nothing listens on the port.
    public static let connectionRefused = Errno(ECONNREFUSED)
    /// ENOTCONN: the socket is not (or no longer) connected.
    public static let notConnected = Errno(ENOTCONN)
    /// EALREADY: already in progress (an HCI user channel another program holds).
    public static let alreadyInProgress = Errno(EALREADY)
    /// ENOTDIR: a path component is not a directory.
    public static let notADirectory = Errno(ENOTDIR)
    /// EISDIR: the path is a directory where a file was wanted.
    public static let isADirectory = Errno(EISDIR)
    /// EEXIST: the name is taken.
    public static let exists = Errno(EEXIST)
    /// EBADF: the number is not an open descriptor (a bug: a descriptor used after close).
    public static let badDescriptor = Errno(EBADF)
    /// ENOSPC: the disk is full.
    public static let noSpace = Errno(ENOSPC)

    /// Device gone: what the kernel says once a USB camera or pad is unplugged.
    public var meansDeviceGone: Bool { [ENODEV, ENXIO, ESHUTDOWN].contains(code) }
    /// Permission refused, whichever errno said so: the message then names the fix (udev, group, capability).
    public var meansPermission: Bool { code == EACCES || code == EPERM }
}

/// Turns a shim's `rc < 0 ? -errno : rc` convention into a typed result.
@inline(__always)
public func check(_ rc: Int32) throws(Errno) -> Int32 {
    if rc < 0 { throw Errno(negated: rc) }
    return rc
}
