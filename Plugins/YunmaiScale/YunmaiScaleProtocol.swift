import HAL
import Transports

/// The Yunmai conversation as a value: user, time and start once subscribed, then one stable
/// reading per final frame. Sources: see `YunmaiFrame`.
public struct YunmaiScaleProtocol: VendorScaleProtocol {
    /// The service holding the measurement notifications; QN and Beurer use FFE0 too.
    public static let measurementService = BluetoothUUID(0xFFE0)
    /// The scale notifies its frames here.
    public static let measurements = BluetoothUUID(0xFFE4)
    /// The separate service holding the command characteristic.
    public static let commandService = BluetoothUUID(0xFFE5)
    /// The user, time and start commands are written here, with response.
    public static let commands = BluetoothUUID(0xFFE9)

    /// Who stands on the scale, sent in the user command for the body fat it computes.
    public struct Person: Hashable, Sendable {
        /// User id (sent big-endian), height in cm, sex and age in years.
        public var id: UInt16, heightCm: UInt8, male: Bool, age: UInt8
        /// Defaults to user 1, a 30-year-old 170 cm man.
        public init(id: UInt16 = 1, heightCm: UInt8 = 170, male: Bool = true, age: UInt8 = 30) {
            (self.id, self.heightCm, self.male, self.age) = (id, heightCm, male, age)
        }
    }

    /// Who is weighed, sent in the user command.
    public var person: Person
    /// Kilograms or pounds (stones become kilograms), sent in the user command and on each reading.
    public var displayUnit: WeightUnit
    /// Now, as Unix seconds, for the time command (injected so tests are repeatable).
    public var unixSeconds: @Sendable () -> Int64

    /// Stones become kilograms; `unixSeconds` is read once, when `start()` builds the time command.
    public init(person: Person = Person(), displayUnit: WeightUnit = .kilograms, unixSeconds: @escaping @Sendable () -> Int64) {
        self.person = person
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.unixSeconds = unixSeconds
    }

    /// Subscribes to FFE4; throws `.unsupported` unless both FFE4 and FFE9 are present.
    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.measurements), available.contains(Self.commands) else {
            throw .unsupported("the Yunmai measurement and command characteristics (FFE4 and FFE9)")
        }
        return [Self.measurements]
    }

    /// Named in the timeout error; the handshake is ready as soon as the writes succeed.
    public var awaiting: String { "the scale to accept the user, time and start commands" }

    /// Writes user, time and start in that order, then reports ready; the scale answers none of them.
    public mutating func start() -> [VendorScaleAction] {
        [.write(Self.commands, YunmaiFrame.user(id: person.id, heightCm: person.heightCm, male: person.male, age: person.age,
                                                unit: displayUnit), withResponse: true, purpose: "the user (0x10)"),
         .write(Self.commands, YunmaiFrame.time(unixSeconds: unixSeconds()), withResponse: true, purpose: "the time (0x11)"),
         .write(Self.commands, YunmaiFrame.start, withResponse: true, purpose: "the start command (0x13)"),
         .ready]
    }

    /// Final frames with a non-zero weight become stable readings (0.01 kg, body fat when sent);
    /// live updates and anything else are ignored.
    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.measurements, case .final(let weight, _, let fat)? = YunmaiFrame(parsing: value),
              weight > 0 else { return [] }
        return [.reading(WeightReading(kilograms: Double(weight) / 100, stable: true, displayUnit: displayUnit,
                                       bodyFatPercent: fat.map { Double($0) / 100 }))]
    }
}
