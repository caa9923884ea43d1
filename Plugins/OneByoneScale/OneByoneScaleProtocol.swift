import HAL
import Transports

/// The 1byone / Eufy conversation as a value: unit and clock, wait for `F1 00`, ask for the
/// stored measurements and read past them until `F2 00`, then live `CF` frames. Sources: see
/// `OneByoneFrame`.
public struct OneByoneScaleProtocol: VendorScaleProtocol {
    /// The 1byone / Eufy service; QN scales use FFF0 too, so the driver matches by name.
    public static let service = BluetoothUUID(0xFFF0)
    /// The unit setting, clock and stored-measurement request are written here, with response.
    public static let commands = BluetoothUUID(0xFFF1)
    /// The scale notifies its `CF` frames and two-byte acknowledgements here.
    public static let frames = BluetoothUUID(0xFFF4)

    /// The scale's local date and time for the `F1` clock packet.
    public struct LocalTime: Hashable, Sendable {
        /// Calendar fields as the caller's calendar gives them, year in full (e.g. 2026).
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
        /// Memberwise initialiser; values are clamped only when the packet is built.
        public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }
    }

    /// Where the opening exchange stands: waiting for `F1 00`, reading past stored frames, or live.
    public enum Phase: Hashable, Sendable {
        /// The clock packet is sent; waiting for the scale's `F1 00`.
        case waitingForClockAcknowledgement
        /// Passing over the stored frames the scale replays first.
        case readingStoredMeasurements
        /// Reading the weight as it is measured.
        case live
    }

    /// Kilograms or pounds (stones are sent as kilograms), set on the scale and passed on with each reading.
    public var displayUnit: WeightUnit
    /// The local time for the clock packet (injected so tests are repeatable).
    public var now: @Sendable () -> LocalTime
    /// The current step; `CF` frames become readings only once it is `.live`.
    public private(set) var phase = Phase.waitingForClockAcknowledgement
    /// Stored measurements the scale sent before the live ones (read past, kept on the scale).
    public private(set) var storedMeasurements = 0

    /// Stones become kilograms; `now` is read once, when `start()` builds the clock packet.
    public init(displayUnit: WeightUnit = .kilograms, now: @escaping @Sendable () -> LocalTime) {
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.now = now
    }

    /// Subscribes to FFF4; throws `.unsupported` unless both FFF1 and FFF4 are present.
    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.frames), available.contains(Self.commands) else {
            throw .unsupported("the 1byone frame and command characteristics (FFF4 and FFF1)")
        }
        return [Self.frames]
    }

    /// Named in the timeout error: what the current phase is waiting for.
    public var awaiting: String {
        switch phase {
        case .waitingForClockAcknowledgement: "the scale's F1 00 acknowledgement of the clock"
        case .readingStoredMeasurements: "the end of the scale's stored measurements (F2 00)"
        case .live: "nothing"
        }
    }

    /// Writes the unit setting and the clock; `.ready` comes only after the stored measurements end.
    public mutating func start() -> [VendorScaleAction] {
        let t = now()
        return [.write(Self.commands, OneByoneFrame.unitSetting(displayUnit), withResponse: true, purpose: "the unit setting (FD 37)"),
                .write(Self.commands, OneByoneFrame.clock(year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute,
                                                          second: t.second), withResponse: true, purpose: "the clock (F1)")]
    }

    /// Steps through the phases on `F1 00` and `F2 00`; live `CF` frames with a weight become readings,
    /// stable when they carry impedance.
    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.frames, let frame = OneByoneFrame(parsing: value) else { return [] }
        switch (frame, phase) {
        case (.clockAcknowledged, .waitingForClockAcknowledgement):
            phase = .readingStoredMeasurements
            return [.write(Self.commands, OneByoneFrame.storedMeasurementsRequest, withResponse: true,
                           purpose: "the request for stored measurements (F2 00)")]
        case (.endOfStoredMeasurements, .readingStoredMeasurements):
            phase = .live
            return [.ready]
        case (.measurement, .readingStoredMeasurements):
            storedMeasurements += 1
            return []
        case (.measurement(let weight, let impedance), .live):
            guard weight > 0 else { return [] }
            return [.reading(WeightReading(kilograms: Double(weight) / 100, stable: impedance != nil ? true : nil,
                                           displayUnit: displayUnit, impedanceOhms: impedance.map { Double($0) / 10 }))]
        default:
            return []
        }
    }
}
