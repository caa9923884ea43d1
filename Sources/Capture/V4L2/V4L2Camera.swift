import CV4L2
import Foundation
import HAL
import LinuxIO
import Synchronization

/// V4L2 request numbers, computed from the kernel's _IOC formula
/// (`dir << 30 | size << 16 | type << 8 | nr`, dir: 1 write, 2 read, 3 read+write), because Swift
/// cannot import the function-like _IOWR macros; the same calls go to libv4l2 when it converts.
enum V4L2Request {
    static func ioc(_ dir: UInt, _ nr: UInt, _ size: Int) -> UInt {
        (dir << 30) | (UInt(size) << 16) | (UInt(UInt8(ascii: "V")) << 8) | nr
    }
    /// _IOR('V', 0, struct v4l2_capability)
    static let queryCapabilities = ioc(2, 0, MemoryLayout<v4l2_capability>.size)
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

/// A live V4L2 camera (`v4l2:/dev/videoN`): raw ioctls, mmap streaming in the single- or the
/// multi-planar API (see `V4L2BufferAPI`), the cheapest grey path (see `V4L2GreyPath`); cameras
/// offering only formats that need decoding (MJPG, RGB…) are read through libv4l2's conversion
/// instead (see `V4L2Calls`).
package final class V4L2Camera: CameraSource {
    /// The device node, e.g. `/dev/video0`, opened afresh by each `start()`.
    public let path: String
    /// What the device said it is at init (QUERYCAP, ENUM_FMT, ENUM_FRAMESIZES); not refreshed later.
    public let info: CameraInfo
    package let requestedWidth: Int
    package let requestedHeight: Int
    /// How long the stream waits for a frame before it ends with `CameraError.timedOut`.
    package let frameTimeout: Duration
    /// The pixel format asked for instead of the cheapest grey path (nil: the cheapest).
    package let requestedFormat: V4L2GreyPath?
    private let running = Mutex<Session?>(nil)

    /// Asks the device what it is (QUERYCAP, ENUM_FMT); it must be a streaming capture device.
    /// `format` (a fourcc such as `NM12`) picks a format the device offers and we read directly,
    /// instead of the cheapest: to try a camera's other formats.
    package init(path: String, width: Int = 640, height: Int = 480, frameTimeout: Duration = .seconds(2),
                format: String? = nil) throws(CameraError) {
        self.path = path
        if let format {
            guard let chosen = V4L2GreyPath.allCases.first(where: { $0.name == format }) else {
                let names = V4L2GreyPath.allCases.map(\.name).joined(separator: ", ")
                throw .noUsableFormat("\(path) in \(format) (the formats read directly are \(names))")
            }
            requestedFormat = chosen
        } else {
            requestedFormat = nil
        }
        requestedWidth = width
        requestedHeight = height
        self.frameTimeout = frameTimeout
        let described: CameraInfo?
        do { described = try V4L2Probe.describe(path: path) } catch { throw V4L2Probe.explain(error, path: path) }
        guard let described else { throw .notACaptureDevice(path) }
        if let requestedFormat, !described.formats.contains(where: { $0.fourcc == requestedFormat.name }) {
            let offered = described.formats.map(\.fourcc).joined(separator: ", ")
            throw .noUsableFormat("\(path) in \(requestedFormat.name) (it offers \(offered))")
        }
        info = described
    }

    /// What the device agreed to at S_FMT for the current stream (nil when not streaming).
    package var streamingFormat: PixelFormatInfo? {
        running.withLock { session in
            session.map { PixelFormatInfo(fourcc: PixelFormatInfo.fourccString($0.greyPath.fourcc),
                                          sizes: [.discrete(width: $0.width, height: $0.height)]) }
        }
    }

    /// Whether the current stream goes through libv4l2's format conversion.
    package var isConverting: Bool { running.withLock { $0?.calls.throughLibV4L2 ?? false } }

    /// Stops any stream in progress, negotiates a format and streams on a capture thread, newest frame only.
    public func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error> {
        await stop()
        let session = try Session.open(path: path, width: requestedWidth, height: requestedHeight, preferred: requestedFormat)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GrayFrame.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { _ in session.requestStop() }
        running.withLock { $0 = session }
        let timeout = frameTimeout
        BlockingWork.start("v4l2 capture") { session.run(into: continuation, timeout: timeout) }
        return stream
    }

    /// Asks the capture thread to stop; it does STREAMOFF, munmap and close itself. Waits at most
    /// about a second for that, so it never hangs on a stuck device.
    package func stop() async {
        guard let session = running.withLock({ state -> Session? in defer { state = nil }; return state }) else { return }
        session.requestStop()
        _ = await session.ended.wait(atMost: .seconds(1), on: ContinuousClock())
    }

    /// One streaming run: the open descriptor, the negotiated format and the mapped buffers.
    final class Session: Sendable {
        let path: String
        let fd: FileDescriptor
        let calls: V4L2Calls
        let api: any V4L2BufferAPI
        let greyPath: V4L2GreyPath
        let width: Int
        let height: Int
        let bytesPerLine: Int
        /// The planes of each mmap'ed buffer, (address bit pattern, length) each; plane 0 is grey.
        let buffers: [[(address: UInt, length: Int)]]
        let stopFlag = Atomic<Bool>(false)
        /// Wakes the capture thread out of poll(2) when the stream is stopped; nil only when the
        /// kernel gives no eventfd (the thread then looks at `stopFlag` every 50 ms).
        let wake = try? WakeEvent()
        /// Opened by the capture thread once it has released the device.
        let ended = Latch()

        /// Asks the capture thread to stop and wakes it.
        func requestStop() {
            stopFlag.store(true, ordering: .relaxed)
            wake?.signal()
        }

        private init(path: String, fd: FileDescriptor, calls: V4L2Calls, api: any V4L2BufferAPI, greyPath: V4L2GreyPath,
                     format: V4L2StreamFormat, buffers: [[(address: UInt, length: Int)]]) {
            self.path = path
            self.fd = fd
            self.calls = calls
            self.api = api
            self.greyPath = greyPath
            width = format.width
            height = format.height
            bytesPerLine = format.bytesPerLine
            self.buffers = buffers
        }

        static func open(path: String, width: Int, height: Int, preferred: V4L2GreyPath? = nil) throws(CameraError) -> Session {
            let fd: FileDescriptor
            do { fd = try FileDescriptor.open(path, .readWrite, nonBlocking: true) } catch { throw V4L2Probe.explain(error, path: path) }
            var mapped: [[(address: UInt, length: Int)]] = []
            var calls = V4L2Calls.direct
            do {
                let caps: VideoCapabilities
                do { caps = try fd.videoCapabilities() } catch { throw V4L2Probe.explain(error, path: path) }
                let multiPlanarOnly = caps.deviceCapabilities & VideoCapabilities.videoCapture == 0
                guard !multiPlanarOnly || caps.deviceCapabilities & VideoCapabilities.videoCaptureMultiPlanar != 0 else {
                    throw CameraError.notACaptureDevice(path)
                }
                guard caps.deviceCapabilities & VideoCapabilities.streaming != 0 else { throw CameraError.noUsableFormat("\(path) (no mmap streaming)") }
                var api: any V4L2BufferAPI = multiPlanarOnly ? V4L2MultiPlanar() : V4L2SinglePlanar(calls: .direct)

                let offered = try formats(fd, bufferType: api.bufferType, path)
                var wanted = preferred.flatMap { offered.contains($0.fourcc) ? $0 : nil } ?? V4L2GreyPath.choose(from: offered)
                if wanted == nil, !offered.isEmpty {
                    // Nothing readable as it comes: let libv4l2 decode to YU12.
                    try V4L2Calls.converting.adopt(fd, multiPlanar: multiPlanarOnly, offered: offered, path: path)
                    calls = .converting
                    api = V4L2SinglePlanar(calls: calls)
                    wanted = .yu12
                }
                guard let wanted else { throw CameraError.noUsableFormat(path) }

                var format: V4L2StreamFormat
                switch api.setFormat(fd, width: width, height: height, fourcc: wanted.fourcc) {
                case .success(let granted): format = granted
                case .failure(let error) where calls.throughLibV4L2 && multiPlanarOnly && error == .invalid:
                    throw CameraError.noUsableFormat(V4L2Calls.cannotConvert(path: path, offered: offered))
                case .failure(let error): throw V4L2Probe.explain(error, path: path)
                }
                // The driver may adjust size or even the format: use what it actually set.
                guard let granted = V4L2GreyPath(fourcc: format.fourcc) else { throw CameraError.noUsableFormat(path) }
                format.bytesPerLine = try checkedPitch(format, granted, path)
                if multiPlanarOnly, !calls.throughLibV4L2 {
                    guard (1...VideoMultiPlanar.maximumPlanes).contains(format.planes) else {
                        throw CameraError.io(driverBug(path, "set a format of \(format.planes) planes; V4L2 allows 1 to \(VideoMultiPlanar.maximumPlanes)"))
                    }
                    api = V4L2MultiPlanar(planes: format.planes)
                }

                let count: UInt32
                switch api.requestBuffers(fd, count: 4) {
                case .success(let granted): count = granted
                case .failure(let error): throw V4L2Probe.explain(error, path: path)
                }
                guard count > 0 else { throw CameraError.io("\(path): the driver granted no buffers") }
                guard count <= 64 else { throw CameraError.io(driverBug(path, "granted \(count) buffers for the 4 asked")) }

                for index in 0..<count {
                    mapped.append(try mapBuffer(index, fd: fd, api: api, calls: calls, format: format, granted: granted, path: path))
                }
                for index in 0..<count { try call(api.queue(fd, index: index), path) }
                try call(stream(calls, fd, api.bufferType, on: true), path)
                return Session(path: path, fd: fd, calls: calls, api: api, greyPath: granted, format: format, buffers: mapped)
            } catch {
                for buffer in mapped { for plane in buffer { calls.unmap(plane.address, length: plane.length) } }
                calls.close(fd)
                throw error as? CameraError ?? .io("\(path): \(error)")
            }
        }

        /// QUERYBUF and mmap for each plane of one buffer, after checking what the driver said:
        /// the format's plane count, and a grey plane long enough for the format's rows.
        private static func mapBuffer(_ index: UInt32, fd: FileDescriptor, api: any V4L2BufferAPI, calls: V4L2Calls, format: V4L2StreamFormat,
                                      granted: V4L2GreyPath, path: String) throws(CameraError) -> [(address: UInt, length: Int)] {
            let answer: V4L2BufferPlanes
            switch api.queryBuffer(fd, index: index) {
            case .success(let planes): answer = planes
            case .failure(let error): throw V4L2Probe.explain(error, path: path)
            }
            guard answer.reportedPlanes == format.planes, answer.planes.count == format.planes else {
                throw .io(driverBug(path, "described buffer \(index) with \(answer.reportedPlanes) planes; its format has \(format.planes)"))
            }
            let needed = granted.bytesNeeded(width: format.width, height: format.height, bytesPerLine: format.bytesPerLine) ?? Int.max
            guard let grey = answer.planes.first, grey.length >= needed else {
                throw .io(driverBug(path, "made buffer \(index) \(answer.planes.first?.length ?? 0) bytes long; "
                    + "\(format.width)x\(format.height) \(granted.name) at \(format.bytesPerLine) bytes a line needs \(needed)"))
            }
            var planes: [(address: UInt, length: Int)] = []
            for plane in answer.planes {
                let mapped = plane.length > 0 ? calls.map(fd, length: plane.length, offset: plane.offset) : nil
                guard case .success(let address) = mapped else {
                    for mapping in planes { calls.unmap(mapping.address, length: mapping.length) }
                    if case .failure(let error) = mapped { throw V4L2Probe.explain(error, path: path) }
                    throw .io(driverBug(path, "gave a plane of buffer \(index) no length"))
                }
                planes.append((UInt(bitPattern: address), plane.length))
            }
            return planes
        }

        /// Every format the device offers for this buffer type (ENUM_FMT until EINVAL).
        private static func formats(_ fd: FileDescriptor, bufferType: UInt32, _ path: String) throws(CameraError) -> [UInt32] {
            var offered: [UInt32] = []
            for index in UInt32(0)..<256 {
                let answer = fd.videoFormat(bufferType: bufferType, index: index)
                if answer.result == -Errno.invalid.code { break }
                try call(answer.result, path)
                offered.append(answer.fourcc)
            }
            return offered
        }

        /// The granted row pitch: 0 means rows are packed; one shorter than a row is a driver's mistake.
        private static func checkedPitch(_ format: V4L2StreamFormat, _ path: V4L2GreyPath, _ device: String) throws(CameraError) -> Int {
            guard format.width > 0, format.height > 0 else {
                throw CameraError.io(driverBug(device, "set a \(format.width)x\(format.height) format"))
            }
            let row = format.width * path.bytesPerPixel
            guard format.bytesPerLine == 0 || format.bytesPerLine >= row else {
                throw CameraError.io(driverBug(device, "set \(format.bytesPerLine) bytes a line for \(format.width)-pixel \(path.name) rows (\(row) bytes)"))
            }
            return max(format.bytesPerLine, row)
        }

        /// A driver answer that cannot be right, and what a person can do about it.
        static func driverBug(_ path: String, _ what: String) -> String {
            "\(path): the driver \(what), which cannot be right: update the kernel (or the camera's driver) "
                + "and report it to the driver's maintainers"
        }

        private static func stream(_ calls: V4L2Calls, _ fd: FileDescriptor, _ type: UInt32, on: Bool) -> Int32 {
            var value = Int32(bitPattern: type)
            return calls.ioctl(fd, on ? V4L2Request.streamOn : V4L2Request.streamOff, &value)
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
                let polled: FileDescriptor.PollEvents
                do { polled = try waitForFrame(until: lastFrame + timeout, clock: clock) } catch {
                    failure = V4L2Probe.explain(error, path: path)
                    break
                }
                if stopFlag.load(ordering: .relaxed) { break }
                let (rc, buffer) = !polled.isEmpty ? api.dequeue(fd) : (-Errno.wouldBlock.code, V4L2DequeuedBuffer())
                if rc == -Errno.wouldBlock.code {
                    if clock.now - lastFrame > timeout { failure = .timedOut(path); break }
                    // A node that polls readable without a frame: don't spin.
                    if !polled.isEmpty { CurrentThread.sleep(for: .milliseconds(5)) }
                    continue
                }
                if rc < 0, Errno(-rc).meansDeviceGone || Errno(-rc) == .ioError { failure = .disappeared(path); break }
                if rc < 0 { failure = V4L2Probe.explain(Errno(-rc), path: path); break }
                lastFrame = clock.now
                // A buffer the driver marks as failed is handed back unread: the frame is missing
                // (a gap in `sequence`, as a dropped frame is), never decoded from corrupt bytes.
                if buffer.index < buffers.count, !buffer.failed {
                    let bytes: UnsafeRawBufferPointer
                    do { bytes = try greyBytes(of: buffer) } catch { failure = error; break }
                    let start = firstTimestamp ?? buffer.timestamp
                    firstTimestamp = start
                    if let pixels = greyPath.extract(from: bytes, width: width, height: height, bytesPerLine: bytesPerLine) {
                        continuation.yield(GrayFrame(width: width, height: height, pixels: pixels,
                                                     timestamp: buffer.timestamp - start, sequence: UInt64(buffer.sequence)))
                    }
                }
                let requeue = api.queue(fd, index: UInt32(clamping: buffer.index))
                if requeue < 0, Errno(-requeue).meansDeviceGone || Errno(-requeue) == .ioError { failure = .disappeared(path); break }
            }
            _ = Self.stream(calls, fd, api.bufferType, on: false)
            for buffer in buffers { for plane in buffer { calls.unmap(plane.address, length: plane.length) } }
            calls.close(fd)
            wake?.close()
            ended.open()
            if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
        }

        /// Blocks until a buffer is ready, the stream is stopped, or the frame deadline passes (one
        /// millisecond past it, so the caller sees it passed): no periodic wake-ups while a camera
        /// is slow.
        private func waitForFrame(until deadline: ContinuousClock.Instant, clock: ContinuousClock) throws(Errno) -> FileDescriptor.PollEvents {
            let milliseconds = clock.now.duration(to: deadline).pollMilliseconds(ceiling: 3_600_000) + 1
            guard let wake else { return try fd.poll(for: .readable, timeoutMilliseconds: min(milliseconds, 50)) }
            return try fd.poll(for: .readable, orWake: wake, timeoutMilliseconds: milliseconds).events
        }

        /// The grey plane's bytes in a dequeued buffer (see `greyRegion`).
        func greyBytes(of buffer: V4L2DequeuedBuffer) throws(CameraError) -> UnsafeRawBufferPointer {
            let plane = buffers[buffer.index][0]
            let region = try Self.greyRegion(of: buffer, planeLength: plane.length, planes: buffers[buffer.index].count, path: path)
            return UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: plane.address).map { $0 + region.lowerBound },
                                          count: region.count)
        }

        /// Where in plane 0 a dequeued buffer's data is, after checking what the driver said about
        /// it against the mapping: the plane count, bytesused (0 means the whole plane, as older
        /// drivers send) at most the plane's length, and data_offset within what is used.
        static func greyRegion(of buffer: V4L2DequeuedBuffer, planeLength: Int, planes: Int, path: String) throws(CameraError) -> Range<Int> {
            guard buffer.reportedPlanes == planes else {
                throw .io(driverBug(path, "returned buffer \(buffer.index) with \(buffer.reportedPlanes) planes; it has \(planes)"))
            }
            let used = buffer.bytesUsed == 0 ? planeLength : buffer.bytesUsed
            guard used <= planeLength else {
                throw .io(driverBug(path, "said \(used) bytes of buffer \(buffer.index)'s plane 0 are used; it is \(planeLength) long"))
            }
            guard buffer.dataOffset <= used else {
                throw .io(driverBug(path, "put buffer \(buffer.index)'s data at offset \(buffer.dataOffset), past the \(used) bytes used"))
            }
            return buffer.dataOffset..<used
        }
    }
}
