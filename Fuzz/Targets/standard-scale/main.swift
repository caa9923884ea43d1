import FuzzSupport
import StandardScale

/// Values a standard scale indicates, in the order they came, through the same combiner a
/// connection uses (multi-packet body composition included), and the feature values it reads.
///
/// Input: values, each a byte choosing the characteristic and a chunk (length byte, value).
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    var combiner = StandardScaleReadingCombiner()
    while !input.isAtEnd {
        let kind = input.byte() % 4
        let value = input.chunk()
        switch kind {
        case 0: _ = combiner.weightMeasurement(value)
        case 1: _ = combiner.bodyCompositionMeasurement(value)
        case 2:
            if let feature = try? WeightScaleFeature(parsing: value) {
                _ = (feature.weightResolution, feature.heightResolution, feature.bmiSupported)
            }
        default:
            if let feature = try? BodyCompositionFeature(parsing: value) {
                _ = (feature.massResolution, feature.heightResolution, feature.impedanceSupported)
            }
        }
    }
    _ = (combiner.malformedValues, combiner.unsuccessfulMeasurements, combiner.droppedParts)
}
