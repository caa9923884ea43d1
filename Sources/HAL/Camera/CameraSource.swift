/// A source of greyscale frames: a V4L2 camera, a video file, or a fake. Flows never see pixels,
/// only decoded codes; `Capture` turns frames into codes.
public protocol CameraSource: Sendable {
    var info: CameraInfo { get }

    /// Starts streaming. The stream keeps only the newest frame, so a slow consumer sees the latest
    /// picture rather than a growing backlog. It ends with a `CameraError` if the device goes away.
    func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error>
    func stop() async
}

/// One luminance plane; `stride` may exceed `width` when the device pads its rows.
public struct GrayFrame: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var stride: Int
    public var pixels: [UInt8]
    /// Time since the stream started, from the device or the file's frame rate.
    public var timestamp: Duration
    public var sequence: UInt64

    public init(width: Int, height: Int, stride: Int? = nil, pixels: [UInt8], timestamp: Duration, sequence: UInt64) {
        self.width = width
        self.height = height
        self.stride = stride ?? width
        self.pixels = pixels
        self.timestamp = timestamp
        self.sequence = sequence
    }
}

/// What a camera says it is: the contract's `cameras` entry.
public struct CameraInfo: Hashable, Sendable {
    public var uri: String
    public var card: String
    /// The kernel driver QUERYCAP names (e.g. `uvcvideo`), or `file` / `fake`.
    public var driver: String
    public var formats: [PixelFormatInfo]
    /// What survives a replug: QUERYCAP's bus info, the USB port and serial number behind the node.
    public var identity: DeviceIdentity

    public init(uri: String, card: String, driver: String, formats: [PixelFormatInfo], identity: DeviceIdentity = .unknown) {
        self.uri = uri
        self.card = card
        self.driver = driver
        self.formats = formats
        self.identity = identity
    }
}

public struct PixelFormatInfo: Hashable, Sendable {
    /// Four characters, e.g. `YUYV`, `MJPG`, `GREY`.
    public var fourcc: String
    public var sizes: [FrameSize]

    public init(fourcc: String, sizes: [FrameSize]) {
        self.fourcc = fourcc
        self.sizes = sizes
    }

    /// The text form of a V4L2 pixel format code (little-endian characters). Bit 31 is not part of
    /// the name: it marks the big-endian variant (`v4l2_fourcc_be`), written with a `-BE` suffix as
    /// v4l2-ctl does (`Y16-BE`, `AR15-BE`).
    public static func fourccString(_ code: UInt32) -> String {
        let bigEndianFlag: UInt32 = 1 << 31
        let chars = (0..<4).map { UInt8(((code & ~bigEndianFlag) >> (8 * UInt32($0))) & 0xFF) }
        let name = String(decoding: chars.map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
            .trimmingTrailingSpaces()
        return code & bigEndianFlag != 0 ? name + "-BE" : name
    }
}

/// A frame size as the device reports it: one size, or a stepwise/continuous range.
public enum FrameSize: Hashable, Sendable, CustomStringConvertible {
    case discrete(width: Int, height: Int)
    case range(minWidth: Int, minHeight: Int, maxWidth: Int, maxHeight: Int)

    /// `640x480`, or `MINWxMINH-MAXWxMAXH` for ranges (the contract's spelling).
    public var description: String {
        switch self {
        case .discrete(let w, let h): "\(w)x\(h)"
        case .range(let w0, let h0, let w1, let h1): "\(w0)x\(h0)-\(w1)x\(h1)"
        }
    }
}

/// Camera failures, each saying what happened to which device.
public enum CameraError: Error, Hashable, Sendable, CustomStringConvertible {
    case notFound(String)
    case permissionDenied(String)
    case noKernelSupport(String)
    case notACaptureDevice(String)
    case noUsableFormat(String)
    case disappeared(String)
    case timedOut(String)
    case badFile(String)
    case io(String)

    public var description: String {
        switch self {
        case .notFound(let path): "camera \(path) not found"
        case .permissionDenied(let path): "no permission to open \(path): add yourself to the video group or run with sudo"
        case .noKernelSupport(let why): why
        case .notACaptureDevice(let path): "\(path) is not a video capture device"
        case .noUsableFormat(let path): "\(path) offers no format we can turn into a grey picture"
        case .disappeared(let path): "camera \(path) disappeared"
        case .timedOut(let path): "camera \(path) sent no frame in time"
        case .badFile(let why): "bad video file: \(why)"
        case .io(let why): "camera I/O failed: \(why)"
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
