import HAL
import LinuxIO

/// Finds capture devices and what they report about themselves (QUERYCAP, ENUM_FMT,
/// ENUM_FRAMESIZES), as `hwprobe list` shows them. Raw ioctls: no formats a conversion library adds.
public struct V4L2Probe: Sendable {
    /// Where /sys and /dev are looked up; a fake tree lets tests probe without cameras.
    public let tree: SystemTree

    /// A probe of the machine's own /sys and /dev unless a test passes a fake tree.
    public init(tree: SystemTree = .live) { self.tree = tree }

    /// Everything one probe found: the capture devices, and the nodes it could not ask.
    public struct Report: Sendable {
        /// The capture devices, each with the formats and sizes its driver itself offers.
        public var cameras: [CameraInfo]
        /// Nodes that exist but could not be asked (permissions, a device that went away).
        public var problems: [String]

        /// Memberwise; mainly for tests and fakes building a report by hand.
        public init(cameras: [CameraInfo], problems: [String]) {
            self.cameras = cameras
            self.problems = problems
        }
    }

    /// Lists /sys/class/video4linux and describes each `video*` node. A node that cannot be asked
    /// becomes a problem in the report; only a kernel without V4L2 throws.
    public func probe() throws(CameraError) -> Report {
        guard let nodes = tree.list("class/video4linux") else {
            throw .noKernelSupport("kernel has no V4L2 support (no /sys/class/video4linux): load videodev and the camera's driver")
        }
        var report = Report(cameras: [], problems: [])
        for node in nodes where node.hasPrefix("video") {
            let path = tree.devPath(node)
            do {
                if let camera = try Self.describe(path: path) { report.cameras.append(camera) }
            } catch {
                report.problems.append(Self.explain(error, path: path).description)
            }
        }
        return report
    }

    /// Asks one node what it is; nil when it is not a capture device (e.g. a UVC metadata node).
    public static func describe(path: String) throws(Errno) -> CameraInfo? {
        try FileDescriptor.withOpened(path, .readWrite, nonBlocking: true) { fd throws(Errno) -> CameraInfo? in
            let caps = try fd.videoCapabilities()
            let busInfo = cText(caps.busInfo)
            var described = try describe(path: path, driver: caps.driver, card: caps.card, deviceCaps: caps.deviceCapabilities,
                                format: { bufferType, index in
                let answer = fd.videoFormat(bufferType: bufferType, index: index)
                return V4L2FormatAnswer(result: answer.result, fourcc: answer.fourcc, flags: answer.flags)
            }, frameSize: { fourcc, index in
                let size = fd.videoFrameSize(fourcc: fourcc, index: index)
                return V4L2FrameSizeAnswer(result: size.result, type: size.type, minWidth: size.minWidth, minHeight: size.minHeight,
                                           maxWidth: size.maxWidth, maxHeight: size.maxHeight)
            })
            // The bus a replug keeps (`usb-0000:00:14.0-2.3`, `platform:vivid-000`); the USB
            // port and serial behind the node come from sysfs (hwprobe's SysfsIdentity).
            if !busInfo.isEmpty { described?.identity.busInfo = busInfo }
            return described
        }
    }

    /// What QUERYCAP, ENUM_FMT and ENUM_FRAMESIZES answered, as `hwprobe list` shows it. Apart
    /// from the ioctls (SPI, so the fuzz target can answer in their place).
    @_spi(Fuzzing) public static func describe(
        path: String, driver: [UInt8], card: [UInt8], deviceCaps: UInt32,
        format: (_ bufferType: UInt32, _ index: UInt32) -> V4L2FormatAnswer,
        frameSize: (_ fourcc: UInt32, _ index: UInt32) -> V4L2FrameSizeAnswer
    ) throws(Errno) -> CameraInfo? {
        let single = deviceCaps & VideoCapabilities.videoCapture != 0
        let multi = deviceCaps & VideoCapabilities.videoCaptureMultiPlanar != 0
        guard single || multi else { return nil }
        let bufferType: UInt32 = single ? 1 : 9
        var formats: [PixelFormatInfo] = []
        var index: UInt32 = 0
        while index < 256 {
            let answer = format(bufferType, index)
            if answer.result == -Errno.invalid.code { break }
            _ = try check(answer.result)
            index += 1
            let emulated: UInt32 = 0x0002 // V4L2_FMT_FLAG_EMULATED: added by libv4l, not the device
            if answer.flags & emulated != 0 { continue }
            formats.append(PixelFormatInfo(fourcc: PixelFormatInfo.fourccString(answer.fourcc),
                                           sizes: try frameSizes(of: answer.fourcc, frameSize)))
        }
        return CameraInfo(uri: "v4l2:\(path)", card: cText(card), driver: cText(driver), formats: formats)
    }

    static func frameSizes(of fourcc: UInt32, _ frameSize: (UInt32, UInt32) -> V4L2FrameSizeAnswer) throws(Errno) -> [FrameSize] {
        var sizes: [FrameSize] = []
        var index: UInt32 = 0
        while index < 1024 {
            let size = frameSize(fourcc, index)
            if size.result == -Errno.invalid.code || size.result == -Errno.notTTY.code { break }
            _ = try check(size.result)
            if size.type == 1 {
                sizes.append(.discrete(width: Int(size.minWidth), height: Int(size.minHeight)))
                index += 1
            } else {
                sizes.append(.range(minWidth: Int(size.minWidth), minHeight: Int(size.minHeight),
                                    maxWidth: Int(size.maxWidth), maxHeight: Int(size.maxHeight)))
                break // stepwise and continuous ranges come as a single entry
            }
        }
        return sizes
    }

    static func explain(_ error: Errno, path: String) -> CameraError {
        if error.meansPermission { return .permissionDenied(path) }
        if error == .noEntry { return .notFound(path) }
        if error.meansDeviceGone { return .disappeared(path) }
        return .io("\(path): \(error)")
    }
}

/// A C string in a byte array (up to its first NUL, or all of it) as Swift text.
func cText(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
}

/// One ENUM_FMT answer: the ioctl's result (0 or -errno) and what it filled in.
@_spi(Fuzzing) public struct V4L2FormatAnswer: Sendable {
    /// 0 on success, or -errno; -EINVAL marks the end of the list.
    public var result: Int32
    /// The pixel format's four-character code, as V4L2 packs it little-endian.
    public var fourcc: UInt32
    /// V4L2_FMT_FLAG_* bits; an emulated format is skipped.
    public var flags: UInt32

    /// Memberwise, so a fuzz target can make up answers.
    public init(result: Int32, fourcc: UInt32, flags: UInt32) {
        self.result = result
        self.fourcc = fourcc
        self.flags = flags
    }
}

/// One ENUM_FRAMESIZES answer: the ioctl's result (0 or -errno) and the size it filled in
/// (type 1 discrete, 2 continuous, 3 stepwise).
@_spi(Fuzzing) public struct V4L2FrameSizeAnswer: Sendable {
    /// 0 on success, or -errno; -EINVAL (or -ENOTTY) ends the list.
    public var result: Int32
    /// 1 discrete, 2 continuous, 3 stepwise; only a discrete answer is followed by another.
    public var type: UInt32
    /// The width for a discrete size, or the smallest width of a range (pixels).
    public var minWidth: UInt32
    /// The height for a discrete size, or the smallest height of a range (pixels).
    public var minHeight: UInt32
    /// The largest width of a range (pixels); unused for a discrete size.
    public var maxWidth: UInt32
    /// The largest height of a range (pixels); unused for a discrete size.
    public var maxHeight: UInt32

    /// Memberwise, so a fuzz target can make up answers.
    public init(result: Int32, type: UInt32, minWidth: UInt32, minHeight: UInt32, maxWidth: UInt32, maxHeight: UInt32) {
        self.result = result
        self.type = type
        self.minWidth = minWidth
        self.minHeight = minHeight
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }
}
