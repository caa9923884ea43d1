import CLinuxShims
import CV4L2
import Foundation
import Glibc
import HAL
import LinuxIO
import Synchronization

/// V4L2 request numbers, computed from the kernel's _IOC formula
/// (`dir << 30 | size << 16 | type << 8 | nr`, dir: 1 write, 2 read, 3 read+write), because Swift
/// cannot import the function-like _IOWR macros and this folder adds no C shims.
enum V4L2Request {
    static func ioc(_ dir: UInt, _ nr: UInt, _ size: Int) -> UInt {
        (dir << 30) | (UInt(size) << 16) | (UInt(UInt8(ascii: "V")) << 8) | nr
    }
    /// _IOWR('V', 4, struct v4l2_format)
    static let getFormat = ioc(3, 4, MemoryLayout<v4l2_format>.size)
    /// _IOWR('V', 5, struct v4l2_format)
    static let setFormat = ioc(3, 5, MemoryLayout<v4l2_format>.size)
    /// _IOWR('V', 8, struct v4l2_requestbuffers)
    static let requestBuffers = ioc(3, 8, MemoryLayout<v4l2_requestbuffers>.size)
    /// _IOWR('V', 9, struct v4l2_buffer)
    static let queryBuffer = ioc(3, 9, MemoryLayout<v4l2_buffer>.size)
    /// _IOWR('V', 15, struct v4l2_buffer)
    static let queueBuffer = ioc(3, 15, MemoryLayout<v4l2_buffer>.size)
    /// _IOWR('V', 17, struct v4l2_buffer)
    static let dequeueBuffer = ioc(3, 17, MemoryLayout<v4l2_buffer>.size)
    /// _IOW('V', 18, int)
    static let streamOn = ioc(1, 18, MemoryLayout<Int32>.size)
    /// _IOW('V', 19, int)
    static let streamOff = ioc(1, 19, MemoryLayout<Int32>.size)

    static let captureType: UInt32 = 1 // V4L2_BUF_TYPE_VIDEO_CAPTURE
    static let memoryMmap: UInt32 = 1  // V4L2_MEMORY_MMAP
}

/// A live V4L2 camera (`v4l2:/dev/videoN`): raw ioctls, mmap streaming, the cheapest grey path
/// (see `V4L2GreyPath`); cameras offering only formats that need decoding (MJPG, RGB…) are read
/// through libv4l2's conversion instead (see `V4L2Calls`).
public final class V4L2Camera: CameraSource {
    public let path: String
    public let info: CameraInfo
    public let requestedWidth: Int
    public let requestedHeight: Int
    /// How long the stream waits for a frame before it ends with `CameraError.timedOut`.
    public let frameTimeout: Duration
    private let running = Mutex<Session?>(nil)

    /// Asks the device what it is (QUERYCAP, ENUM_FMT); it must be a streaming capture device.
    public init(path: String, width: Int = 640, height: Int = 480, frameTimeout: Duration = .seconds(2)) throws(CameraError) {
        self.path = path
        requestedWidth = width
        requestedHeight = height
        self.frameTimeout = frameTimeout
        let described: CameraInfo?
        do { described = try V4L2Probe.describe(path: path) } catch { throw V4L2Probe.explain(error, path: path) }
        guard let described else { throw .notACaptureDevice(path) }
        info = described
    }

    /// What the device agreed to at S_FMT for the current stream (nil when not streaming).
    public var streamingFormat: PixelFormatInfo? {
        running.withLock { session in
            session.map { PixelFormatInfo(fourcc: PixelFormatInfo.fourccString($0.greyPath.fourcc),
                                          sizes: [.discrete(width: $0.width, height: $0.height)]) }
        }
    }

    /// Whether the current stream goes through libv4l2's format conversion.
    public var isConverting: Bool { running.withLock { $0?.calls.throughLibV4L2 ?? false } }

    public func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        await stop()
        let session = try Session.open(path: path, width: requestedWidth, height: requestedHeight)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GrayFrame.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { _ in session.stopFlag.store(true, ordering: .relaxed) }
        running.withLock { $0 = session }
        let timeout = frameTimeout
        Thread.detachNewThread { session.run(into: continuation, timeout: timeout) }
        return stream
    }

    /// Asks the capture thread to stop; it does STREAMOFF, munmap and close itself. Waits at most
    /// about a second for that, so it never hangs on a stuck device.
    public func stop() async {
        guard let session = running.withLock({ state -> Session? in defer { state = nil }; return state }) else { return }
        session.stopFlag.store(true, ordering: .relaxed)
        for _ in 0..<100 where !session.finished.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// One streaming run: the open descriptor, the negotiated format and the mapped buffers.
    final class Session: Sendable {
        let path: String
        let fd: Int32
        let calls: V4L2Calls
        let greyPath: V4L2GreyPath
        let width: Int
        let height: Int
        let bytesPerLine: Int
        /// (address bit pattern, length) of each mmap'ed buffer.
        let buffers: [(address: UInt, length: Int)]
        let stopFlag = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)

        private init(path: String, fd: Int32, calls: V4L2Calls, greyPath: V4L2GreyPath, width: Int, height: Int, bytesPerLine: Int,
                     buffers: [(address: UInt, length: Int)]) {
            self.path = path
            self.fd = fd
            self.calls = calls
            self.greyPath = greyPath
            self.width = width
            self.height = height
            self.bytesPerLine = bytesPerLine
            self.buffers = buffers
        }

        static func open(path: String, width: Int, height: Int) throws(CameraError) -> Session {
            let fd = hal_open(path, O_RDWR | O_NONBLOCK)
            guard fd >= 0 else { throw V4L2Probe.explain(Errno(-fd), path: path) }
            var mapped: [(address: UInt, length: Int)] = []
            var calls = V4L2Calls.direct
            do {
                var caps = hal_v4l2_caps()
                try call(hal_v4l2_querycap(fd, &caps), path)
                guard caps.device_caps & HAL_V4L2_CAP_VIDEO_CAPTURE != 0 else { throw CameraError.notACaptureDevice(path) }
                guard caps.device_caps & HAL_V4L2_CAP_STREAMING != 0 else { throw CameraError.noUsableFormat("\(path) (no mmap streaming)") }

                var offered: [UInt32] = []
                var flags: UInt32 = 0
                var text = [CChar](repeating: 0, count: 32)
                for index in UInt32(0)..<256 {
                    var fourcc: UInt32 = 0
                    let rc = hal_v4l2_enum_fmt(fd, V4L2Request.captureType, index, &fourcc, &flags, &text)
                    if rc == -EINVAL { break }
                    try call(rc, path)
                    offered.append(fourcc)
                }
                var wanted = V4L2GreyPath.choose(from: offered)
                if wanted == nil, !offered.isEmpty {
                    // Nothing readable as it comes: let libv4l2 decode to YU12.
                    guard V4L2Calls.converting.adopt(fd) else { throw CameraError.noUsableFormat("\(path) (libv4l2 cannot convert its formats)") }
                    calls = .converting
                    wanted = .yu12
                }
                guard let wanted else { throw CameraError.noUsableFormat(path) }

                var format = v4l2_format()
                format.type = V4L2Request.captureType
                format.fmt.pix.width = UInt32(width)
                format.fmt.pix.height = UInt32(height)
                format.fmt.pix.pixelformat = wanted.fourcc
                format.fmt.pix.field = 1 // V4L2_FIELD_NONE
                try call(calls.ioctl(fd, V4L2Request.setFormat, &format), path)
                // The driver may adjust size or even the format: use what it actually set.
                guard let granted = V4L2GreyPath(fourcc: format.fmt.pix.pixelformat) else { throw CameraError.noUsableFormat(path) }

                var request = v4l2_requestbuffers()
                request.count = 4
                request.type = V4L2Request.captureType
                request.memory = V4L2Request.memoryMmap
                try call(calls.ioctl(fd, V4L2Request.requestBuffers, &request), path)
                guard request.count > 0 else { throw CameraError.io("\(path): the driver granted no buffers") }

                for index in 0..<request.count {
                    var buffer = v4l2_buffer()
                    buffer.index = index
                    buffer.type = V4L2Request.captureType
                    buffer.memory = V4L2Request.memoryMmap
                    try call(calls.ioctl(fd, V4L2Request.queryBuffer, &buffer), path)
                    let length = Int(buffer.length)
                    guard let address = calls.map(fd, length: length, offset: buffer.m.offset) else {
                        throw V4L2Probe.explain(Errno.current, path: path)
                    }
                    mapped.append((UInt(bitPattern: address), length))
                }
                for index in 0..<request.count {
                    var buffer = v4l2_buffer()
                    buffer.index = index
                    buffer.type = V4L2Request.captureType
                    buffer.memory = V4L2Request.memoryMmap
                    try call(calls.ioctl(fd, V4L2Request.queueBuffer, &buffer), path)
                }
                var type = Int32(V4L2Request.captureType)
                try call(calls.ioctl(fd, V4L2Request.streamOn, &type), path)
                return Session(path: path, fd: fd, calls: calls, greyPath: granted, width: Int(format.fmt.pix.width),
                               height: Int(format.fmt.pix.height), bytesPerLine: Int(format.fmt.pix.bytesperline),
                               buffers: mapped)
            } catch {
                for buffer in mapped { calls.unmap(buffer.address, length: buffer.length) }
                calls.close(fd)
                throw error as? CameraError ?? .io("\(path): \(error)")
            }
        }

        private static func call(_ rc: Int32, _ path: String) throws(CameraError) {
            if rc < 0 { throw V4L2Probe.explain(Errno(-rc), path: path) }
        }

        /// The capture loop, on its own thread: poll, DQBUF, copy, re-QBUF, until stopped or failed.
        func run(into continuation: AsyncThrowingStream<GrayFrame, any Error>.Continuation, timeout: Duration) {
            let clock = ContinuousClock()
            var lastFrame = clock.now
            var firstTimestamp: Duration?
            var failure: CameraError?
            while !stopFlag.load(ordering: .relaxed) {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let polled = poll(&pfd, 1, 50)
                if polled < 0, errno != EINTR { failure = V4L2Probe.explain(Errno.current, path: path); break }
                var buffer = v4l2_buffer()
                buffer.type = V4L2Request.captureType
                buffer.memory = V4L2Request.memoryMmap
                let rc = polled > 0 ? calls.ioctl(fd, V4L2Request.dequeueBuffer, &buffer) : -EAGAIN
                if rc == -EAGAIN {
                    if clock.now - lastFrame > timeout { failure = .timedOut(path); break }
                    if polled > 0 { usleep(5_000) } // a node that polls readable without a frame: don't spin
                    continue
                }
                if rc == -ENODEV || rc == -EIO || rc == -ENXIO || rc == -ESHUTDOWN { failure = .disappeared(path); break }
                if rc < 0 { failure = V4L2Probe.explain(Errno(-rc), path: path); break }
                lastFrame = clock.now
                let index = Int(buffer.index)
                if index < buffers.count {
                    let stamp = Duration.seconds(Int64(buffer.timestamp.tv_sec)) + .microseconds(Int64(buffer.timestamp.tv_usec))
                    let start = firstTimestamp ?? stamp
                    firstTimestamp = start
                    let used = buffer.bytesused > 0 ? Int(buffer.bytesused) : buffers[index].length
                    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: buffers[index].address),
                                                       count: min(used, buffers[index].length))
                    if let pixels = greyPath.extract(from: bytes, width: width, height: height, bytesPerLine: bytesPerLine) {
                        continuation.yield(GrayFrame(width: width, height: height, pixels: pixels,
                                                     timestamp: stamp - start, sequence: UInt64(buffer.sequence)))
                    }
                }
                let requeue = calls.ioctl(fd, V4L2Request.queueBuffer, &buffer)
                if requeue == -ENODEV || requeue == -EIO || requeue == -ENXIO { failure = .disappeared(path); break }
            }
            var type = Int32(V4L2Request.captureType)
            _ = calls.ioctl(fd, V4L2Request.streamOff, &type)
            for buffer in buffers { calls.unmap(buffer.address, length: buffer.length) }
            calls.close(fd)
            finished.store(true, ordering: .releasing)
            if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
        }
    }
}
