import CLinuxShims
import CV4L2
import Glibc

/// How a V4L2 node is called: straight to the kernel, or through libv4l2, which converts formats
/// needing decoding (MJPEG, RGB, Bayer …) to YU12 in user space. Once libv4l2 has adopted a
/// descriptor, every ioctl, mmap and close of it must go through libv4l2 too, so the choice is
/// one value carried by the stream rather than a flag checked at each call.
package struct VideoCalls: Sendable, Hashable {
    /// Whether calls go through libv4l2.
    package let throughLibV4L2: Bool

    /// Straight to the kernel.
    package static let direct = VideoCalls(throughLibV4L2: false)
    /// Through libv4l2's conversion.
    package static let converting = VideoCalls(throughLibV4L2: true)

    /// Hands an open descriptor to libv4l2 with format-enumeration emulation (a no-op for direct
    /// calls); false when libv4l2 will not take it. For a multi-planar camera stdout is silenced
    /// meanwhile, because libv4l2's mplane plugin announces itself there.
    package func adopt(_ fd: FileDescriptor, multiPlanar: Bool) -> Bool {
        guard throughLibV4L2 else { return true }
        let opened = multiPlanar ? hal_libv4l2_fd_open_quietly(fd.rawValue, V4L2_ENABLE_ENUM_FMT_EMULATION)
            : v4l2_fd_open(fd.rawValue, V4L2_ENABLE_ENUM_FMT_EMULATION)
        return opened >= 0
    }

    /// One ioctl with a struct argument, retried when interrupted: the result, or -errno (the
    /// convention the capture loop compares against EAGAIN and friends).
    package func ioctl<Argument>(_ fd: FileDescriptor, _ request: UInt, _ argument: inout Argument) -> Int32 {
        withUnsafeMutablePointer(to: &argument) { pointer in
            throughLibV4L2 ? hal_libv4l2_ioctl(fd.rawValue, request, pointer) : hal_ioctl(fd.rawValue, request, pointer)
        }
    }

    /// Maps `length` bytes of the driver's buffer at `offset` read-write and shared.
    package func map(_ fd: FileDescriptor, length: Int, offset: UInt32) -> Result<UnsafeMutableRawPointer, Errno> {
        let address = throughLibV4L2
            ? v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd.rawValue, Int64(offset))
            : mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd.rawValue, off_t(offset))
        guard let address, Int(bitPattern: address) != -1 else { return .failure(.current) }
        return .success(address)
    }

    /// Undoes ``map(_:length:offset:)``.
    package func unmap(_ address: UInt, length: Int) {
        let pointer = UnsafeMutableRawPointer(bitPattern: address)
        if throughLibV4L2 { _ = v4l2_munmap(pointer, length) } else { _ = munmap(pointer, length) }
    }

    /// Closes the descriptor (through libv4l2 when it adopted it, so its state is freed too).
    package func close(_ fd: FileDescriptor) {
        if throughLibV4L2 { _ = v4l2_close(fd.rawValue) } else { fd.close() }
    }
}

/// QUERYCAP's answer, with the fixed-size C strings as their bytes up to the first NUL.
package struct VideoCapabilities: Sendable, Hashable {
    package var driver: [UInt8]
    package var card: [UInt8]
    package var busInfo: [UInt8]
    /// The whole physical device's capabilities.
    package var capabilities: UInt32
    /// This node's own (valid when `capabilities` has ``deviceCapabilitiesFlag``).
    package var deviceCapabilities: UInt32

    package init(driver: [UInt8] = [], card: [UInt8] = [], busInfo: [UInt8] = [], capabilities: UInt32, deviceCapabilities: UInt32) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
        self.deviceCapabilities = deviceCapabilities
    }

    /// V4L2_CAP_VIDEO_CAPTURE: the single-planar capture API.
    package static let videoCapture = HAL_V4L2_CAP_VIDEO_CAPTURE
    /// V4L2_CAP_VIDEO_CAPTURE_MPLANE: the multi-planar capture API.
    package static let videoCaptureMultiPlanar = HAL_V4L2_CAP_VIDEO_CAPTURE_MPLANE
    /// V4L2_CAP_STREAMING: mmap streaming I/O.
    package static let streaming = HAL_V4L2_CAP_STREAMING
    /// V4L2_CAP_DEVICE_CAPS: `deviceCapabilities` is filled in.
    package static let deviceCapabilitiesFlag = HAL_V4L2_CAP_DEVICE_CAPS

    /// This node's capabilities, falling back to the device's for drivers too old to say.
    package var effective: UInt32 {
        capabilities & Self.deviceCapabilitiesFlag != 0 ? deviceCapabilities : capabilities
    }
}

/// ENUM_FMT's answer for one index: `result` is 0 or -errno (-EINVAL past the last format).
package struct VideoFormatAnswer: Sendable, Hashable {
    package var result: Int32
    package var fourcc: UInt32
    package var flags: UInt32
}

/// ENUM_FRAMESIZES's answer for one index: `result` is 0 or -errno. A discrete size has
/// min == max; `type` is V4L2_FRMSIZE_TYPE_* (1 discrete, 2 continuous, 3 stepwise).
package struct VideoFrameSizeAnswer: Sendable, Hashable {
    package var result: Int32
    package var type: UInt32
    package var minWidth: UInt32
    package var minHeight: UInt32
    package var maxWidth: UInt32
    package var maxHeight: UInt32
}

/// S_FMT's answer in the multi-planar API: what the driver set, per plane (up to
/// ``VideoMultiPlanar/maximumPlanes``) and the plane count it gave, which may be more.
package struct VideoPlanarFormat: Sendable, Hashable {
    package var width: UInt32
    package var height: UInt32
    package var fourcc: UInt32
    package var planes: UInt32
    package var bytesPerLine: [UInt32]
    package var sizeImage: [UInt32]
}

/// One plane of a multi-planar buffer as QUERYBUF or DQBUF described it.
package struct VideoPlane: Sendable, Hashable {
    package var bytesUsed: UInt32
    package var length: UInt32
    package var offset: UInt32
    package var dataOffset: UInt32

    package init(bytesUsed: UInt32 = 0, length: UInt32 = 0, offset: UInt32 = 0, dataOffset: UInt32 = 0) {
        self.bytesUsed = bytesUsed
        self.length = length
        self.offset = offset
        self.dataOffset = dataOffset
    }
}

/// A multi-planar buffer as QUERYBUF or DQBUF described it; `planes` holds up to
/// ``VideoMultiPlanar/maximumPlanes``, `reportedPlanes` is the driver's own count.
package struct VideoPlanarBuffer: Sendable, Hashable {
    package var index: UInt32 = 0
    package var sequence: UInt32 = 0
    package var flags: UInt32 = 0
    package var seconds: Int64 = 0
    package var microseconds: Int64 = 0
    package var reportedPlanes: UInt32 = 0
    package var planes: [VideoPlane] = []
}

/// The multi-planar capture API's calls (V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE), straight to the
/// kernel: libv4l2 has no multi-planar interface. Results are 0 or -errno.
package enum VideoMultiPlanar {
    /// VIDEO_MAX_PLANES.
    package static let maximumPlanes = Int(HAL_V4L2_MAX_PLANES)
    /// V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.
    package static let bufferType = HAL_V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE

    /// S_FMT (progressive); the driver's adjusted format.
    package static func setFormat(_ fd: FileDescriptor, width: UInt32, height: UInt32, fourcc: UInt32) -> Result<VideoPlanarFormat, Errno> {
        var format = hal_v4l2_mplane_format()
        format.width = width
        format.height = height
        format.pixelformat = fourcc
        let rc = hal_v4l2_mplane_set_format(fd.rawValue, &format)
        if rc < 0 { return .failure(Errno(-rc)) }
        let lines = withUnsafeBytes(of: format.bytesperline) { Array($0.bindMemory(to: UInt32.self)) }
        let sizes = withUnsafeBytes(of: format.sizeimage) { Array($0.bindMemory(to: UInt32.self)) }
        return .success(VideoPlanarFormat(width: format.width, height: format.height, fourcc: format.pixelformat,
                                          planes: format.num_planes, bytesPerLine: lines, sizeImage: sizes))
    }

    /// REQBUFS for `count` mmap buffers of `bufferType`; how many the driver granted.
    package static func requestBuffers(_ fd: FileDescriptor, bufferType: UInt32, count: UInt32) -> Result<UInt32, Errno> {
        var granted = count
        let rc = hal_v4l2_request_buffers(fd.rawValue, bufferType, &granted)
        return rc < 0 ? .failure(Errno(-rc)) : .success(granted)
    }

    /// QUERYBUF of buffer `index` with `planes` planes.
    package static func queryBuffer(_ fd: FileDescriptor, index: UInt32, planes: Int) -> Result<VideoPlanarBuffer, Errno> {
        var buffer = hal_v4l2_mplane_buffer()
        let rc = hal_v4l2_mplane_query_buffer(fd.rawValue, index, UInt32(planes), &buffer)
        return rc < 0 ? .failure(Errno(-rc)) : .success(Self.buffer(buffer))
    }

    /// QBUF; 0 or -errno.
    package static func queueBuffer(_ fd: FileDescriptor, index: UInt32, planes: Int) -> Int32 {
        hal_v4l2_mplane_queue_buffer(fd.rawValue, index, UInt32(planes))
    }

    /// DQBUF; 0 or -errno and, on success, what the driver filled in.
    package static func dequeueBuffer(_ fd: FileDescriptor, planes: Int) -> (result: Int32, buffer: VideoPlanarBuffer) {
        var buffer = hal_v4l2_mplane_buffer()
        let rc = hal_v4l2_mplane_dequeue_buffer(fd.rawValue, UInt32(planes), &buffer)
        return (rc, Self.buffer(buffer))
    }

    private static func buffer(_ raw: hal_v4l2_mplane_buffer) -> VideoPlanarBuffer {
        let planes = withUnsafeBytes(of: raw.planes) { Array($0.bindMemory(to: hal_v4l2_plane.self)) }
        return VideoPlanarBuffer(index: raw.index, sequence: raw.sequence, flags: raw.flags, seconds: raw.seconds,
                                 microseconds: raw.microseconds, reportedPlanes: raw.num_planes,
                                 planes: planes.map { VideoPlane(bytesUsed: $0.bytesused, length: $0.length,
                                                                  offset: $0.mem_offset, dataOffset: $0.data_offset) })
    }
}

extension FileDescriptor {
    /// QUERYCAP: what the node is.
    package func videoCapabilities() throws(Errno) -> VideoCapabilities {
        var caps = hal_v4l2_caps()
        _ = try check(hal_v4l2_querycap(rawValue, &caps))
        return VideoCapabilities(driver: Self.cString(caps.driver), card: Self.cString(caps.card),
                                 busInfo: Self.cString(caps.bus_info), capabilities: caps.capabilities,
                                 deviceCapabilities: caps.device_caps)
    }

    /// ENUM_FMT of format `index` for `bufferType` (1 capture, 9 capture-mplane).
    package func videoFormat(bufferType: UInt32, index: UInt32) -> VideoFormatAnswer {
        var fourcc: UInt32 = 0
        var flags: UInt32 = 0
        var text = [CChar](repeating: 0, count: 32)
        let rc = hal_v4l2_enum_fmt(rawValue, bufferType, index, &fourcc, &flags, &text)
        return VideoFormatAnswer(result: rc, fourcc: fourcc, flags: flags)
    }

    /// ENUM_FRAMESIZES of size `index` for `fourcc`.
    package func videoFrameSize(fourcc: UInt32, index: UInt32) -> VideoFrameSizeAnswer {
        var size = hal_v4l2_framesize()
        let rc = hal_v4l2_enum_framesize(rawValue, fourcc, index, &size)
        return VideoFrameSizeAnswer(result: rc, type: size.type, minWidth: size.min_width, minHeight: size.min_height,
                                    maxWidth: size.max_width, maxHeight: size.max_height)
    }

    /// A fixed-size C char array's bytes up to the first NUL.
    static func cString<T>(_ tuple: T) -> [UInt8] {
        withUnsafeBytes(of: tuple) { Array($0.prefix { $0 != 0 }) }
    }
}
