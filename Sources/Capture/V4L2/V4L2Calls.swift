import CLinuxShims
import CV4L2
import Glibc
import HAL

/// The calls a stream makes, straight to the kernel or through libv4l2. A camera whose formats
/// have a grey path (GREY, NV12, YU12, YUYV, NM12, … see `V4L2GreyPath`) is read directly, with no
/// conversion, in whichever of V4L2's buffer APIs it speaks (see `V4L2BufferAPI`); one
/// that only offers formats needing decoding (MJPEG, RGB, Bayer…) is read through libv4l2, which
/// converts each frame to YU12 in user space — the cost is paid only by such cameras.
struct V4L2Calls: Sendable {
    let throughLibV4L2: Bool

    static let direct = V4L2Calls(throughLibV4L2: false)
    static let converting = V4L2Calls(throughLibV4L2: true)

    /// Hands an open descriptor to libv4l2 (a no-op for direct calls). A multi-planar-only camera
    /// is converted only through libv4l2's mplane plugin (libv4l-mplane.so, in libv4l-0), which
    /// shows it to libv4l2 as single-planar, for single-plane formats only; whether the plugin
    /// took the device shows in the capabilities libv4l2 then reports.
    func adopt(_ fd: Int32, multiPlanar: Bool, offered: [UInt32], path: String) throws(CameraError) {
        guard throughLibV4L2 else { return }
        // The plugin announces itself with printf on stdout, which `--json` keeps for its object.
        let opened = multiPlanar ? hal_libv4l2_fd_open_quietly(fd, V4L2_ENABLE_ENUM_FMT_EMULATION)
            : v4l2_fd_open(fd, V4L2_ENABLE_ENUM_FMT_EMULATION)
        guard opened >= 0 else { throw .noUsableFormat("\(path) (libv4l2 cannot convert its formats)") }
        guard multiPlanar else { return }
        var caps = v4l2_capability()
        let rc = ioctl(fd, V4L2Request.queryCapabilities, &caps)
        let deviceCaps = caps.capabilities & HAL_V4L2_CAP_DEVICE_CAPS != 0 ? caps.device_caps : caps.capabilities
        guard rc >= 0, deviceCaps & HAL_V4L2_CAP_VIDEO_CAPTURE != 0 else {
            throw .noUsableFormat(Self.cannotConvert(path: path, offered: offered, pluginMissing: true))
        }
    }

    /// Why a multi-planar camera's formats cannot be read: none has a grey plane we read directly,
    /// and libv4l2 converts a multi-planar camera's formats only through its mplane plugin, and
    /// only those that come in one plane.
    static func cannotConvert(path: String, offered: [UInt32], pluginMissing: Bool = false) -> String {
        let names = offered.map { PixelFormatInfo.fourccString($0) }.joined(separator: ", ")
        let why = pluginMissing
            ? "libv4l2's multi-planar plugin (libv4l-mplane.so, in the libv4l-0 package) is not installed: install it"
            : "libv4l2 converts a multi-planar camera's formats only when they come in a single plane"
        return "\(path) (multi-planar: \(names); none has a grey plane we read directly, and \(why))"
    }

    /// The result, or -errno.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        throughLibV4L2 ? hal_libv4l2_ioctl(fd, request, argument) : hal_ioctl(fd, request, argument)
    }

    func map(_ fd: Int32, length: Int, offset: UInt32) -> UnsafeMutableRawPointer? {
        let address = throughLibV4L2
            ? v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(offset))
            : mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
        guard let address, Int(bitPattern: address) != -1 else { return nil }
        return address
    }

    func unmap(_ address: UInt, length: Int) {
        let pointer = UnsafeMutableRawPointer(bitPattern: address)
        if throughLibV4L2 { _ = v4l2_munmap(pointer, length) } else { _ = munmap(pointer, length) }
    }

    func close(_ fd: Int32) {
        if throughLibV4L2 { _ = v4l2_close(fd) } else { _ = Glibc.close(fd) }
    }
}
