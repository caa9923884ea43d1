import CLinuxShims
import HAL
import LinuxIO

/// Finds capture devices and what they report about themselves (QUERYCAP, ENUM_FMT,
/// ENUM_FRAMESIZES), as `hwprobe list` shows them. Raw ioctls: no formats a conversion library adds.
public struct V4L2Probe: Sendable {
    public let tree: SystemTree

    public init(tree: SystemTree = .live) { self.tree = tree }

    public struct Report: Sendable {
        public var cameras: [CameraInfo]
        /// Nodes that exist but could not be asked (permissions, a device that went away).
        public var problems: [String]

        public init(cameras: [CameraInfo], problems: [String]) {
            self.cameras = cameras
            self.problems = problems
        }
    }

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
            var caps = hal_v4l2_caps()
            _ = try check(hal_v4l2_querycap(fd.rawValue, &caps))
            let single = caps.device_caps & HAL_V4L2_CAP_VIDEO_CAPTURE != 0
            let multi = caps.device_caps & HAL_V4L2_CAP_VIDEO_CAPTURE_MPLANE != 0
            guard single || multi else { return nil }
            let bufferType: UInt32 = single ? 1 : 9
            var formats: [PixelFormatInfo] = []
            var index: UInt32 = 0
            while index < 256 {
                var fourcc: UInt32 = 0
                var flags: UInt32 = 0
                var text = [CChar](repeating: 0, count: 32)
                let rc = hal_v4l2_enum_fmt(fd.rawValue, bufferType, index, &fourcc, &flags, &text)
                if rc == -Errno.invalid.code { break }
                _ = try check(rc)
                index += 1
                let emulated: UInt32 = 0x0002 // V4L2_FMT_FLAG_EMULATED: added by libv4l, not the device
                if flags & emulated != 0 { continue }
                formats.append(PixelFormatInfo(fourcc: PixelFormatInfo.fourccString(fourcc),
                                               sizes: try frameSizes(fd: fd, fourcc: fourcc)))
            }
            return CameraInfo(uri: "v4l2:\(path)", card: cString(caps.card), driver: cString(caps.driver), formats: formats)
        }
    }

    static func frameSizes(fd: FileDescriptor, fourcc: UInt32) throws(Errno) -> [FrameSize] {
        var sizes: [FrameSize] = []
        var index: UInt32 = 0
        while index < 1024 {
            var size = hal_v4l2_framesize()
            let rc = hal_v4l2_enum_framesize(fd.rawValue, fourcc, index, &size)
            if rc == -Errno.invalid.code || rc == -Errno.notTTY.code { break }
            _ = try check(rc)
            if size.type == 1 {
                sizes.append(.discrete(width: Int(size.min_width), height: Int(size.min_height)))
                index += 1
            } else {
                sizes.append(.range(minWidth: Int(size.min_width), minHeight: Int(size.min_height),
                                    maxWidth: Int(size.max_width), maxHeight: Int(size.max_height)))
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

/// A fixed-size C char array as Swift text.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
