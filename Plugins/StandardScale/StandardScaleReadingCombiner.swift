import HAL

/// Turns the values a standard scale indicates into HAL readings, one decision per value.
///
/// - A Weight Measurement (WSS) becomes a reading; the body composition (fat, impedance) of a
///   Body Composition Measurement that arrived before it without a weight of its own is attached.
/// - A Body Composition Measurement (BCS) that carries a weight becomes a reading by itself.
///   One without a weight waits for the next Weight Measurement.
/// - "Measurement unsuccessful" values yield nothing; malformed values are skipped and counted.
public struct StandardScaleReadingCombiner: Sendable {
    private var assembler = BodyCompositionAssembler()
    private var pendingComposition: BodyCompositionMeasurement?
    /// Values that could not be parsed (too short for their flags, inconsistent parts).
    public private(set) var malformedValues = 0
    /// Measurements the scale reported as unsuccessful.
    public private(set) var unsuccessfulMeasurements = 0

    /// Starts with nothing pending; make one per connection.
    public init() {}

    /// Multi-packet parts dropped because their measurement never completed.
    public var droppedParts: Int { assembler.droppedParts }

    /// Handles one Weight Measurement value: the reading to emit, or nil when malformed or unsuccessful.
    public mutating func weightMeasurement(_ bytes: [UInt8]) -> WeightReading? {
        let measurement: WeightMeasurement
        do { measurement = try WeightMeasurement(parsing: bytes) } catch {
            malformedValues += 1
            return nil
        }
        guard var reading = measurement.reading else {
            unsuccessfulMeasurements += 1
            return nil
        }
        if let composition = pendingComposition.take() {
            reading.bodyFatPercent = composition.bodyFatPercent
            reading.impedanceOhms = composition.impedanceOhms
        }
        return reading
    }

    /// Handles one Body Composition value or packet: a reading when it carries a weight, else nil
    /// (a weight-less composition is held for the next Weight Measurement).
    public mutating func bodyCompositionMeasurement(_ bytes: [UInt8]) -> WeightReading? {
        let assembled: BodyCompositionMeasurement?
        do { assembled = try assembler.add(bytes) } catch {
            malformedValues += 1
            return nil
        }
        guard let measurement = assembled else { return nil }
        guard measurement.isSuccessful else {
            unsuccessfulMeasurements += 1
            return nil
        }
        if let reading = measurement.reading { return reading }
        pendingComposition = measurement
        return nil
    }

    /// The link ended: nothing half-received carries over.
    public mutating func reset() {
        assembler.reset()
        pendingComposition = nil
    }
}
