import HAL

/// The newest frame a `DecodingPipeline` decoded and what came of it, for a live preview.
///
/// The pipeline only swaps this in after each decode (the frame's pixels are shared, never
/// copied), and whoever draws it takes it when it has time: the decoder never waits for a viewer.
package struct PipelineGlimpse: Sendable {
    /// The decoded frame itself, pixels shared with the pipeline rather than copied.
    public var frame: GrayFrame
    /// Codes read in this frame, by either lane.
    package var symbolCount: Int
    /// Where the decoder saw code-like regions and read codes; nil when it did not look (a viewer
    /// may then run the region finder itself, off the decoding path).
    package var sighting: Sighting?
    /// Counts the glimpses published so far, so a viewer can tell a new one from one it has drawn.
    package var number: UInt64

    package init(frame: GrayFrame, symbolCount: Int, sighting: Sighting?, number: UInt64) {
        self.frame = frame
        self.symbolCount = symbolCount
        self.sighting = sighting
        self.number = number
    }
}
