import CV4L2
import HAL
import LinuxIO

/// The calls a stream makes, straight to the kernel or through libv4l2. A camera whose formats
/// have a grey path (GREY, NV12, YU12, YUYV, NM12, … see `V4L2GreyPath`) is read directly, with no
/// conversion, in whichever of V4L2's buffer APIs it speaks (see `V4L2BufferAPI`); one
/// that only offers formats needing decoding (MJPEG, RGB, Bayer…) is read through libv4l2, which
/// converts each frame to YU12 in user space — the cost is paid only by such cameras.
struct V4L2Calls: Sendable {
    /// The calls themselves (LinuxIO's, straight or through libv4l2).
    let video: VideoCalls
    var throughLibV4L2: Bool { video.throughLibV4L2 }

    static let direct = V4L2Calls(video: .direct)
    static let converting = V4L2Calls(video: .converting)

    /// Hands an open descriptor to libv4l2 (a no-op for direct calls). A multi-planar-only camera
    /// is converted only through libv4l2's mplane plugin (libv4l-mplane.so, in libv4l-0), which
    /// shows it to libv4l2 as single-planar, for single-plane formats only; whether the plugin
    /// took the device shows in the capabilities libv4l2 then reports.
    func adopt(_ fd: FileDescriptor, multiPlanar: Bool, offered: [UInt32], path: String) throws(CameraError) {
        guard throughLibV4L2 else { return }
        guard video.adopt(fd, multiPlanar: multiPlanar) else {
            throw .noUsableFormat("\(path) (libv4l2 cannot convert its formats)")
        }
        guard multiPlanar else { return }
        var caps = v4l2_capability()
        let rc = video.ioctl(fd, V4L2Request.queryCapabilities, &caps)
        let answered = VideoCapabilities(capabilities: caps.capabilities,
                                         deviceCapabilities: caps.device_caps)
        guard rc >= 0, answered.effective & VideoCapabilities.videoCapture != 0 else {
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
    func ioctl<Argument>(_ fd: FileDescriptor, _ request: UInt, _ argument: inout Argument) -> Int32 {
        video.ioctl(fd, request, &argument)
    }

    func map(_ fd: FileDescriptor, length: Int, offset: UInt32) -> Result<UnsafeMutableRawPointer, Errno> {
        video.map(fd, length: length, offset: offset)
    }

    func unmap(_ address: UInt, length: Int) { video.unmap(address, length: length) }

    func close(_ fd: FileDescriptor) { video.close(fd) }
}
