import HAL
import Transports

/// The MGB conversation as a value: the configuration sequence once subscribed, then one
/// reading per result. Sources: see `IcomonFrame`.
public struct IcomonScaleProtocol: VendorScaleProtocol {
    /// The MGB service; shared with other protocols, so it claims a device only with a known name.
    public static let service = BluetoothUUID(0xFFB0)
    /// The six 8-byte configuration packets are written here, with response.
    public static let configuration = BluetoothUUID(0xFFB1)
    /// The scale notifies its two 20-byte result frames here.
    public static let results = BluetoothUUID(0xFFB2)

    /// Who stands on the scale, for the body fat it computes itself.
    public struct Person: Hashable, Sendable {
        /// Sent as 1 (male) or 2 (female) in the `FB` packet.
        public var male: Bool
        /// Age in years, sent as is in the `FB` packet.
        public var age: UInt8
        /// Height in cm (one byte, so at most 255), sent in the `FB` packet.
        public var heightCm: UInt8
        /// Defaults to a 30-year-old 170 cm man when the caller knows nobody better.
        public init(male: Bool = true, age: UInt8 = 30, heightCm: UInt8 = 170) {
            self.male = male
            self.age = age
            self.heightCm = heightCm
        }
    }

    /// The scale's local date and time, for the `FD` and `FC` packets.
    public struct LocalTime: Hashable, Sendable {
        /// Calendar fields as the caller's calendar gives them; the year is sent as year − 2000, all clamped to a byte.
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
        /// Memberwise initialiser; values are clamped only when the packets are built.
        public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }
    }

    /// Who is weighed, sent in the `FB` packet.
    public var person: Person
    /// Kilograms or pounds (stones are sent as kilograms), sent in the `FE` packet and on each reading.
    public var displayUnit: WeightUnit
    /// The local time for the `FD` and `FC` packets (injected so tests are repeatable).
    public var now: @Sendable () -> LocalTime
    /// Not set by this protocol yet (the second result frame is ignored), so always nil.
    public private(set) var pendingFat: Double?

    /// Stones become kilograms; `now` is read once, when `start()` builds the packets.
    public init(person: Person = Person(), displayUnit: WeightUnit = .kilograms, now: @escaping @Sendable () -> LocalTime) {
        self.person = person
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.now = now
    }

    /// Subscribes to FFB2; throws `.unsupported` unless both FFB1 and FFB2 are present.
    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.results), available.contains(Self.configuration) else {
            throw .unsupported("the ICOMON result and configuration characteristics (FFB2 and FFB1)")
        }
        return [Self.results]
    }

    /// Named in the timeout error; the handshake is ready as soon as the writes succeed.
    public var awaiting: String { "the scale to accept its configuration" }

    /// The six configuration writes of BluetoothMGB.java, in its order, then ready: the scale
    /// answers none of them, it only refuses.
    public mutating func start() -> [VendorScaleAction] {
        let time = now()
        let clamp = { (value: Int) in UInt8(clamping: max(0, value)) }
        let unit: UInt8 = displayUnit == .pounds ? 2 : 1
        let packets: [([UInt8], String)] = [
            (IcomonFrame.configuration(0xF7, 0, 0, 0), "the first opener (F7)"),
            (IcomonFrame.configuration(0xFA, 0, 0, 0), "the second opener (FA)"),
            (IcomonFrame.configuration(0xFB, person.male ? 1 : 2, person.age, person.heightCm), "the person (FB)"),
            (IcomonFrame.configuration(0xFD, clamp(time.year - 2000), clamp(time.month), clamp(time.day)), "the date (FD)"),
            (IcomonFrame.configuration(0xFC, clamp(time.hour), clamp(time.minute), clamp(time.second)), "the time (FC)"),
            (IcomonFrame.configuration(0xFE, 0x06, unit, 0), "the unit (FE)"),
        ]
        return packets.map { .write(Self.configuration, $0.0, withResponse: true, purpose: $0.1) } + [.ready]
    }

    /// The first result frame becomes a stable reading (weight in 0.1 kg, body fat when non-zero);
    /// the second frame and anything else is ignored.
    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.results, let frame = IcomonFrame(parsing: value) else { return [] }
        switch frame {
        case .result(let weight, _, let fat):
            guard weight > 0 else { return [] }
            return [.reading(WeightReading(kilograms: Double(weight) / 10, stable: true, displayUnit: displayUnit,
                                           bodyFatPercent: fat > 0 ? Double(fat) / 10 : nil))]
        case .composition:
            return []
        }
    }
}
