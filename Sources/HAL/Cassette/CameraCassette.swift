/// What a cassette (docs/cassette-format.md, version 1.1) holds of a camera: the camera's identity
/// as it reported itself, and the frames the decoding pipeline took from it with their times.
///
/// Plain values, so a test can build one or compare two. The pixels themselves are not here: they
/// are in the cassette's Y4M companion file (`frames`), which a replay reads one frame at a time,
/// so a long recording is never held in memory.
public struct CameraCassette: Hashable, Sendable {
    /// The identity the camera reported (QUERYCAP, ENUM_FMT, ENUM_FRAMESIZES): a replay reports the same.
    public var info: CameraInfo
    /// V4L2's bus info (`usb-0000:00:14.0-1`, `platform:vivid-000`), when the camera gave one.
    /// It identifies a port of a machine: `--anonymize` replaces it.
    public var busInfo: String?
    /// The companion file with the pixels, when any frame was recorded.
    public var frames: FrameFile?
    /// Each recorded frame's time (from the stream's start) and sequence number, in order.
    public var times: [FrameTime]

    /// Builds a camera section; no `frames` and no `times` is a camera that was opened but gave no frame.
    public init(info: CameraInfo, busInfo: String? = nil, frames: FrameFile? = nil, times: [FrameTime] = []) {
        self.info = info
        self.busInfo = busInfo
        self.frames = frames
        self.times = times
    }

    /// The Y4M file beside the cassette: its name (in the cassette's directory, never a path),
    /// its exact size, and the picture size, all checked before a replay trusts it.
    public struct FrameFile: Hashable, Sendable {
        /// The file's name in the cassette's directory; never a path, so a cassette cannot point elsewhere.
        public var name: String
        /// The file's exact size in bytes; a replay refuses a file of any other size.
        public var bytes: Int
        /// Picture width in pixels, which the Y4M header must agree with.
        public var width: Int
        /// Picture height in pixels, which the Y4M header must agree with.
        public var height: Int

        /// Builds the description of a frame file.
        public init(name: String, bytes: Int, width: Int, height: Int) {
            self.name = name
            self.bytes = bytes
            self.width = width
            self.height = height
        }
    }

    /// When one recorded frame arrived and its number, so a replay hands out frames at the same pace.
    public struct FrameTime: Hashable, Sendable {
        /// Time from the start of the stream.
        public var at: Duration
        /// The frame's sequence number as the camera gave it.
        public var sequence: UInt64

        /// Builds one frame's time.
        public init(at: Duration, sequence: UInt64) {
            self.at = at
            self.sequence = sequence
        }
    }

    /// What bounds a camera section (the reader's limits and the recorder's both).
    public enum Limits {
        /// Frames kept per camera: 30 frames a second for over half an hour.
        public static let frames = 65_536
        /// The companion file's largest size; recording stops keeping frames before it.
        public static let frameFileBytes = 1 << 30
        /// Formats, and sizes per format, in an identity.
        public static let formats = 256
        /// Most sizes listed for one format.
        public static let sizesPerFormat = 256
        /// The longest card, driver or bus text (QUERYCAP's fields are 32 bytes; files name longer cards).
        public static let textBytes = 256
    }
}
