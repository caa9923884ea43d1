import CV4L2
import LinuxIO

/// V4L2 has two streaming APIs: the single-planar one (`V4L2_BUF_TYPE_VIDEO_CAPTURE`, one buffer a
/// frame) and the multi-planar one (`…_CAPTURE_MPLANE`, a frame in up to eight planes, each mapped
/// on its own: many laptop and SoC cameras speak only this). The stream's loop is the same for
/// both; these are the calls that differ. What a driver answers is handed back as it came, and
/// `V4L2Camera.Session` checks it before use.
protocol V4L2BufferAPI: Sendable {
    var bufferType: UInt32 { get }
    /// S_FMT; the format the driver actually set.
    func setFormat(_ fd: FileDescriptor, width: Int, height: Int, fourcc: UInt32) -> Result<V4L2StreamFormat, Errno>
    /// REQBUFS for `count` mmap buffers; how many the driver granted.
    func requestBuffers(_ fd: FileDescriptor, count: UInt32) -> Result<UInt32, Errno>
    /// QUERYBUF: where each plane of buffer `index` is mapped.
    func queryBuffer(_ fd: FileDescriptor, index: UInt32) -> Result<V4L2BufferPlanes, Errno>
    /// QBUF; the result, or -errno.
    func queue(_ fd: FileDescriptor, index: UInt32) -> Int32
    /// DQBUF; the result (or -errno) and, on success, what the driver filled in.
    func dequeue(_ fd: FileDescriptor) -> (result: Int32, buffer: V4L2DequeuedBuffer)
}

/// What S_FMT granted. `planes` is the driver's own count (1 in the single-planar API); the sizes
/// are plane 0's, where every grey path reads.
struct V4L2StreamFormat: Sendable {
    var width: Int
    var height: Int
    var fourcc: UInt32
    var planes: Int
    var bytesPerLine: Int
    var sizeImage: Int
}

/// QUERYBUF's answer: each plane's mmap offset and length, and the plane count the driver gave.
struct V4L2BufferPlanes: Sendable {
    var reportedPlanes: Int
    var planes: [(offset: UInt32, length: Int)]
}

/// DQBUF's answer, for plane 0 (the grey one) and the plane count the driver gave.
struct V4L2DequeuedBuffer: Sendable {
    var index: Int = 0
    var sequence: UInt32 = 0
    var timestamp: Duration = .zero
    var reportedPlanes: Int = 1
    var bytesUsed: Int = 0
    var dataOffset: Int = 0
    var flags: UInt32 = 0

    /// V4L2_BUF_FLAG_ERROR: the driver says the buffer's data may be corrupt (a dropped USB
    /// packet, a sensor glitch); its bytes are not a frame worth decoding.
    static let errorFlag: UInt32 = 0x0040

    var failed: Bool { flags & Self.errorFlag != 0 }
}

/// The single-planar API, straight to the kernel or through libv4l2 (which also makes a
/// multi-planar camera look single-planar, see `V4L2Calls`).
struct V4L2SinglePlanar: V4L2BufferAPI {
    let calls: V4L2Calls
    var bufferType: UInt32 { V4L2Request.captureType }

    func setFormat(_ fd: FileDescriptor, width: Int, height: Int, fourcc: UInt32) -> Result<V4L2StreamFormat, Errno> {
        var format = v4l2_format()
        format.type = bufferType
        format.fmt.pix.width = UInt32(clamping: width)
        format.fmt.pix.height = UInt32(clamping: height)
        format.fmt.pix.pixelformat = fourcc
        format.fmt.pix.field = 1 // V4L2_FIELD_NONE
        let rc = calls.ioctl(fd, V4L2Request.setFormat, &format)
        if rc < 0 { return .failure(Errno(-rc)) }
        return .success(V4L2StreamFormat(width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height),
                                         fourcc: format.fmt.pix.pixelformat, planes: 1,
                                         bytesPerLine: Int(format.fmt.pix.bytesperline), sizeImage: Int(format.fmt.pix.sizeimage)))
    }

    func requestBuffers(_ fd: FileDescriptor, count: UInt32) -> Result<UInt32, Errno> {
        var request = v4l2_requestbuffers()
        request.count = count
        request.type = bufferType
        request.memory = V4L2Request.memoryMmap
        let rc = calls.ioctl(fd, V4L2Request.requestBuffers, &request)
        return rc < 0 ? .failure(Errno(-rc)) : .success(request.count)
    }

    func queryBuffer(_ fd: FileDescriptor, index: UInt32) -> Result<V4L2BufferPlanes, Errno> {
        var buffer = emptyBuffer(index)
        let rc = calls.ioctl(fd, V4L2Request.queryBuffer, &buffer)
        if rc < 0 { return .failure(Errno(-rc)) }
        return .success(V4L2BufferPlanes(reportedPlanes: 1, planes: [(buffer.m.offset, Int(buffer.length))]))
    }

    func queue(_ fd: FileDescriptor, index: UInt32) -> Int32 {
        var buffer = emptyBuffer(index)
        return calls.ioctl(fd, V4L2Request.queueBuffer, &buffer)
    }

    func dequeue(_ fd: FileDescriptor) -> (result: Int32, buffer: V4L2DequeuedBuffer) {
        var buffer = emptyBuffer(0)
        let rc = calls.ioctl(fd, V4L2Request.dequeueBuffer, &buffer)
        return (rc, V4L2DequeuedBuffer(index: Int(buffer.index), sequence: buffer.sequence,
                                       timestamp: .seconds(Int64(buffer.timestamp.tv_sec)) + .microseconds(Int64(buffer.timestamp.tv_usec)),
                                       reportedPlanes: 1, bytesUsed: Int(buffer.bytesused), dataOffset: 0, flags: buffer.flags))
    }

    private func emptyBuffer(_ index: UInt32) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = bufferType
        buffer.memory = V4L2Request.memoryMmap
        return buffer
    }
}

/// The multi-planar API, straight to the kernel (libv4l2 has no multi-planar interface of its
/// own). `planes` is the count the granted format has, at most `VideoMultiPlanar.maximumPlanes`.
struct V4L2MultiPlanar: V4L2BufferAPI {
    var planes: Int = 1
    var bufferType: UInt32 { VideoMultiPlanar.bufferType }

    func setFormat(_ fd: FileDescriptor, width: Int, height: Int, fourcc: UInt32) -> Result<V4L2StreamFormat, Errno> {
        VideoMultiPlanar.setFormat(fd, width: UInt32(clamping: width), height: UInt32(clamping: height), fourcc: fourcc).map { format in
            V4L2StreamFormat(width: Int(format.width), height: Int(format.height), fourcc: format.fourcc,
                             planes: Int(format.planes), bytesPerLine: Int(format.bytesPerLine.first ?? 0),
                             sizeImage: Int(format.sizeImage.first ?? 0))
        }
    }

    func requestBuffers(_ fd: FileDescriptor, count: UInt32) -> Result<UInt32, Errno> {
        VideoMultiPlanar.requestBuffers(fd, bufferType: bufferType, count: count)
    }

    func queryBuffer(_ fd: FileDescriptor, index: UInt32) -> Result<V4L2BufferPlanes, Errno> {
        VideoMultiPlanar.queryBuffer(fd, index: index, planes: planes).map { buffer in
            V4L2BufferPlanes(reportedPlanes: Int(buffer.reportedPlanes),
                             planes: buffer.planes.prefix(planes).map { (offset: $0.offset, length: Int($0.length)) })
        }
    }

    func queue(_ fd: FileDescriptor, index: UInt32) -> Int32 {
        VideoMultiPlanar.queueBuffer(fd, index: index, planes: planes)
    }

    func dequeue(_ fd: FileDescriptor) -> (result: Int32, buffer: V4L2DequeuedBuffer) {
        let (rc, buffer) = VideoMultiPlanar.dequeueBuffer(fd, planes: planes)
        let grey = buffer.planes.first ?? VideoPlane(bytesUsed: 0, length: 0, offset: 0, dataOffset: 0)
        return (rc, V4L2DequeuedBuffer(index: Int(buffer.index), sequence: buffer.sequence,
                                       timestamp: .seconds(buffer.seconds) + .microseconds(buffer.microseconds),
                                       reportedPlanes: Int(buffer.reportedPlanes), bytesUsed: Int(grey.bytesUsed),
                                       dataOffset: Int(grey.dataOffset), flags: buffer.flags))
    }
}

/// For the v4l2 fuzz target: a capture's checks on a DQBUF answer (`V4L2Camera.Session.greyRegion`)
/// with whatever a driver might say, and where plane 0's data would be read from (nil: refused).
@_spi(Fuzzing) public enum V4L2DequeueCheck {
    /// The byte range of plane 0 a capture would read for this DQBUF answer, or nil when the checks refuse it.
    public static func greyRegion(index: Int, reportedPlanes: Int, bytesUsed: Int, dataOffset: Int, flags: UInt32,
                                  planeLength: Int, planes: Int) -> Range<Int>? {
        let buffer = V4L2DequeuedBuffer(index: index, reportedPlanes: reportedPlanes, bytesUsed: bytesUsed, dataOffset: dataOffset,
                                        flags: flags)
        return try? V4L2Camera.Session.greyRegion(of: buffer, planeLength: planeLength, planes: planes, path: "/dev/video0")
    }
}
