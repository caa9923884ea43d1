/// A source of greyscale frames: a V4L2 camera, a video file, or a fake. Flows never see pixels,
/// only decoded codes; `Capture` turns frames into codes.
public protocol CameraSource: Sendable {
    /// What the camera says it is and offers, readable before `start()`.
    var info: CameraInfo { get }

    /// Starts streaming. The stream keeps only the newest frame, so a slow consumer sees the latest
    /// picture rather than a growing backlog. It ends with a `CameraError` if the device goes away.
    func start() async throws(CameraError) -> AsyncThrowingStream<GrayFrame, any Error>
    /// Ends the stream and lets go of the device.
    func stop() async
}

/// One luminance plane; `stride` may exceed `width` when the device pads its rows.
public struct GrayFrame: Sendable, Hashable {
    /// Visible pixels per row.
    public var width: Int
    /// Number of rows.
    public var height: Int
    /// Bytes from the start of one row to the next; readers must step by this, not by `width`.
    public var stride: Int
    /// One byte of luminance per pixel, row after row, each row starting `stride` bytes after the last.
    public var pixels: [UInt8]
    /// Time since the stream started, from the device or the file's frame rate.
    public var timestamp: Duration
    /// The frame's number in its stream, carried through to `DecodedFrame` so codes can be traced to frames.
    public var sequence: UInt64

    /// Builds a frame; a nil `stride` means the rows are packed (stride equals width).
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
    /// The device URI the camera was opened by, e.g. `v4l2:/dev/video0` or `sim:camera`.
    public var uri: String
    /// The human name the device gives itself (QUERYCAP's card), shown to the person at the bench.
    public var card: String
    /// The kernel driver QUERYCAP names (e.g. `uvcvideo`), or `file` / `fake`.
    public var driver: String
    /// Every pixel format the device offers, with the sizes it offers each in.
    public var formats: [PixelFormatInfo]
    /// What survives a replug: QUERYCAP's bus info, the USB port and serial number behind the node.
    public var identity: DeviceIdentity

    /// Builds the description; identity defaults to unknown for sources with nothing to survive a replug.
    public init(uri: String, card: String, driver: String, formats: [PixelFormatInfo], identity: DeviceIdentity = .unknown) {
        self.uri = uri
        self.card = card
        self.driver = driver
        self.formats = formats
        self.identity = identity
    }
}

/// One pixel format a camera offers and the frame sizes it can deliver in it.
public struct PixelFormatInfo: Hashable, Sendable {
    /// Four characters, e.g. `YUYV`, `MJPG`, `GREY`.
    public var fourcc: String
    /// The frame sizes the device lists for this format.
    public var sizes: [FrameSize]

    /// Builds the entry as the device enumerated it.
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
    /// Exactly one size the device can deliver.
    case discrete(width: Int, height: Int)
    /// Any size between the two corners, as stepwise or continuous devices report.
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
    /// No device node or file at that path.
    case notFound(String)
    /// The node exists but we may not open it; usually the `video` group is missing.
    case permissionDenied(String)
    /// The kernel has no V4L2 at all; the text says which modules to load.
    case noKernelSupport(String)
    /// The node is a V4L2 device that cannot capture video, e.g. a metadata node.
    case notACaptureDevice(String)
    /// None of the device's pixel formats can be turned into a grey picture.
    case noUsableFormat(String)
    /// The camera went away mid-stream, e.g. it was unplugged.
    case disappeared(String)
    /// The camera stopped sending frames for longer than the stream waits.
    case timedOut(String)
    /// A video file or a cassette's frames cannot be read as they claim to be; the text says how.
    case badFile(String)
    /// Another OS call on the device failed; the text carries the error.
    case io(String)

    /// The words a person reads in messages and reports, naming the device where there is one.
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
