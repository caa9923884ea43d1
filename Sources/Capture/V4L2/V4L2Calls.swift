import CLinuxShims
import CV4L2
import Glibc

/// The calls a stream makes, straight to the kernel or through libv4l2. A camera whose formats
/// have a grey path (GREY, NV12, YU12, YUYV) is read directly, with no copy or conversion; one
/// that only offers formats needing decoding (MJPEG, RGB, Bayer…) is read through libv4l2, which
/// converts each frame to YU12 in user space — the cost is paid only by such cameras.
struct V4L2Calls: Sendable {
    let throughLibV4L2: Bool

    static let direct = V4L2Calls(throughLibV4L2: false)
    static let converting = V4L2Calls(throughLibV4L2: true)

    /// Hands an open descriptor to libv4l2 (a no-op for direct calls).
    func adopt(_ fd: Int32) -> Bool {
        guard throughLibV4L2 else { return true }
        return v4l2_fd_open(fd, V4L2_ENABLE_ENUM_FMT_EMULATION) >= 0
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
