import HAL

/// A decoder with a cheap first answer and, now and then, a slow second opinion.
///
/// `DecodingPipeline` gives the second its own lane: the first answer goes out as soon as it is
/// there, the second runs beside the next frames when its lane is free (and is dropped when it is
/// still busy with the one before), so a slow fallback costs the frames it helps, not every
/// frame after it. `decode(_:)` is both, one after the other, for callers without lanes.
public protocol TwoLaneDecoder: CodeDecoder {
    func decodeFirst(_ frame: GrayFrame) -> (symbols: [DecodedSymbol], second: (@Sendable () -> [DecodedSymbol])?)
}
