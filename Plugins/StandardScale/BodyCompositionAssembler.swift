/// Puts multi-packet Body Composition measurements back together.
///
/// BCS 1.0 (§4.2, Body Composition Measurement indications): when a value does not fit in
/// ATT_MTU − 3 bytes the analyser splits it, sets the Multiple Packet Measurement bit (12) in
/// every part, and starts every part with Flags and Body Fat Percentage; each part's flags name
/// only the fields that part carries. The full value is at most 30 bytes, so at the minimum
/// ATT_MTU of 23 a measurement needs two parts — which is also what the specification describes —
/// so two is the default, and a part announcing a field already collected starts a new
/// measurement (the previous one lost a part and is dropped, counted in `droppedParts`).
public struct BodyCompositionAssembler: Sendable {
    /// How many parts make one measurement; never below 2, the split BCS 1.0 describes.
    public let packetsPerMeasurement: Int
    private var parts: [BodyCompositionMeasurement] = []
    /// Parts thrown away because their measurement never completed.
    public private(set) var droppedParts = 0

    /// Values below 2 are raised to 2; pass more only for an analyser known to split further.
    public init(packetsPerMeasurement: Int = 2) {
        self.packetsPerMeasurement = max(2, packetsPerMeasurement)
    }

    /// Parts waiting for the rest of their measurement.
    public var pendingParts: Int { parts.count }

    /// Parses one indication; returns the whole measurement once it is complete (at once for a
    /// single-packet value), nil while parts are still missing. A malformed value throws and
    /// abandons any measurement in progress.
    public mutating func add(_ bytes: [UInt8]) throws(StandardScaleParseError) -> BodyCompositionMeasurement? {
        let measurement: BodyCompositionMeasurement
        do {
            measurement = try BodyCompositionMeasurement(parsing: bytes)
        } catch {
            dropPending()
            throw error
        }
        return add(measurement)
    }

    /// Adds an already parsed value; same rules as `add(_ bytes:)`, and a part that fails to merge is dropped.
    public mutating func add(_ measurement: BodyCompositionMeasurement) -> BodyCompositionMeasurement? {
        guard measurement.isMultiplePacket else {
            dropPending()
            return measurement
        }
        if !parts.isEmpty, !belongsToPending(measurement) { dropPending() }
        parts.append(measurement)
        guard parts.count == packetsPerMeasurement else { return nil }
        defer { parts = [] }
        do {
            var whole = parts[0]
            for part in parts.dropFirst() { whole = try whole.merging(part) }
            return whole
        } catch {
            droppedParts += parts.count
            return nil
        }
    }

    /// Forgets a measurement in progress (the link ended).
    public mutating func reset() { dropPending() }

    private func belongsToPending(_ part: BodyCompositionMeasurement) -> Bool {
        let collected = parts.reduce(BodyCompositionMeasurement.Flags()) { $0.union($1.flags) }
        let announced = part.flags.intersection(.fieldBits)
        return collected.intersection(announced).isEmpty && parts.allSatisfy { $0.units == part.units }
    }

    private mutating func dropPending() {
        droppedParts += parts.count
        parts = []
    }
}
