import HAL

/// A decoder with a cheap first answer and, now and then, a slow second opinion.
///
/// `DecodingPipeline` gives the second its own lane: the first answer goes out as soon as it is
/// there, the second runs beside the next frames when its lane is free (and is dropped when it is
/// still busy with the one before), so a slow fallback costs the frames it helps, not every
/// frame after it. `decode(_:)` is both, one after the other, for callers without lanes.
package protocol TwoLaneDecoder: CodeDecoder {
    func decodeFirst(_ frame: GrayFrame) -> FirstLaneAnswer
}

/// What a `TwoLaneDecoder` says about a frame at once.
package struct FirstLaneAnswer: Sendable {
    package var symbols: [DecodedSymbol]
    /// The slow second opinion, when this frame earns one; it returns only what it adds.
    public var second: (@Sendable () -> [DecodedSymbol])?
    /// Where the decoder saw code-like regions and read codes, when it looked (a live preview
    /// outlines them); nil when it did not.
    package var sighting: Sighting?

    package init(symbols: [DecodedSymbol], second: (@Sendable () -> [DecodedSymbol])? = nil, sighting: Sighting? = nil) {
        self.symbols = symbols
        self.second = second
        self.sighting = sighting
    }
}

/// Where, in one frame, codes were read and code-like regions were seen: what a preview needs to
/// outline and tick, and what aiming hints are derived from.
package struct Sighting: Sendable, Hashable {
    /// Code-like regions the region finder saw (read or not), likeliest first.
    public var regions: [FrameRegion]
    /// Where codes were read (the decoders' own bounding boxes).
    public var read: [FrameRegion]

    package init(regions: [FrameRegion], read: [FrameRegion]) {
        self.regions = regions
        self.read = read
    }
}
