/// One symbol (a QR code) found in a frame: its exact bytes, as the code carries them.
public struct DecodedSymbol: Hashable, Sendable {
    /// The payload exactly as decoded, which may not be text; compare these, not `text`.
    public var bytes: [UInt8]

    /// Wraps bytes a decoder found.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// Builds a symbol carrying this text as UTF-8, handy for fakes and tests.
    public init(text: String) { self.bytes = Array(text.utf8) }

    /// The bytes as text when they are valid UTF-8 (VB1 codes always are).
    public var text: String? { String(validating: bytes, as: UTF8.self) }
}

/// Every symbol found in one frame.
public struct DecodedFrame: Hashable, Sendable {
    /// The number of the camera frame the symbols came from.
    public var sequence: UInt64
    /// When that frame was taken, as time since the stream started.
    public var timestamp: Duration
    /// The symbols found; empty when the frame held none.
    public var symbols: [DecodedSymbol]

    /// Builds a decoded frame from a frame's number, time and symbols.
    public init(sequence: UInt64, timestamp: Duration, symbols: [DecodedSymbol]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.symbols = symbols
    }
}

/// Turns a frame into symbols. zbar is the first implementation; others join as plugins.
public protocol CodeDecoder: Sendable {
    /// The decoder's name, as `-v` output and `HWPROBE_DECODER` spell it.
    var name: String { get }
    /// Every symbol found in the frame, or none; called once per frame the pipeline decodes.
    func decode(_ frame: GrayFrame) -> [DecodedSymbol]
}

/// Decoded codes from a camera, which is all the import flow needs to know about cameras.
/// The stream ends with a `CameraError` when its camera goes away.
public protocol CodeSource: Sendable {
    /// Which camera (and decoder) the codes come from, in words for messages.
    var description: String { get }
    /// Starts the camera and yields decoded frames until the consumer stops or the camera fails.
    func codes() -> AsyncThrowingStream<DecodedFrame, any Error>
}
