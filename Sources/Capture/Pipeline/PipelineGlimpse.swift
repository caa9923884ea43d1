import HAL

/// The newest frame a `DecodingPipeline` decoded and what came of it, for a live preview.
///
/// The pipeline only swaps this in after each decode (the frame's pixels are shared, never
/// copied), and whoever draws it takes it when it has time: the decoder never waits for a viewer.
public struct PipelineGlimpse: Sendable {
    public var frame: GrayFrame
    /// Codes read in this frame, by either lane.
    public var symbolCount: Int
    /// Where the decoder saw code-like regions and read codes; nil when it did not look (a viewer
    /// may then run the region finder itself, off the decoding path).
    public var sighting: Sighting?
    /// Counts the glimpses published so far, so a viewer can tell a new one from one it has drawn.
    public var number: UInt64

    public init(frame: GrayFrame, symbolCount: Int, sighting: Sighting?, number: UInt64) {
        self.frame = frame
        self.symbolCount = symbolCount
        self.sighting = sighting
        self.number = number
    }
}
