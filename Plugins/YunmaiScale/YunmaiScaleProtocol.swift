import HAL
import Transports

/// The Yunmai conversation as a value: user, time and start once subscribed, then one stable
/// reading per final frame. Sources: see `YunmaiFrame`.
public struct YunmaiScaleProtocol: VendorScaleProtocol {
    public static let measurementService = BluetoothUUID(0xFFE0)
    public static let measurements = BluetoothUUID(0xFFE4)
    public static let commandService = BluetoothUUID(0xFFE5)
    public static let commands = BluetoothUUID(0xFFE9)

    public struct Person: Hashable, Sendable {
        public var id: UInt16, heightCm: UInt8, male: Bool, age: UInt8
        public init(id: UInt16 = 1, heightCm: UInt8 = 170, male: Bool = true, age: UInt8 = 30) {
            (self.id, self.heightCm, self.male, self.age) = (id, heightCm, male, age)
        }
    }

    public var person: Person
    public var displayUnit: WeightUnit
    public var unixSeconds: @Sendable () -> Int64

    public init(person: Person = Person(), displayUnit: WeightUnit = .kilograms, unixSeconds: @escaping @Sendable () -> Int64) {
        self.person = person
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.unixSeconds = unixSeconds
    }

    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.measurements), available.contains(Self.commands) else {
            throw .unsupported("the Yunmai measurement and command characteristics (FFE4 and FFE9)")
        }
        return [Self.measurements]
    }

    public var awaiting: String { "the scale to accept the user, time and start commands" }

    public mutating func start() -> [VendorScaleAction] {
        [.write(Self.commands, YunmaiFrame.user(id: person.id, heightCm: person.heightCm, male: person.male, age: person.age,
                                                unit: displayUnit), withResponse: true, purpose: "the user (0x10)"),
         .write(Self.commands, YunmaiFrame.time(unixSeconds: unixSeconds()), withResponse: true, purpose: "the time (0x11)"),
         .write(Self.commands, YunmaiFrame.start, withResponse: true, purpose: "the start command (0x13)"),
         .ready]
    }

    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.measurements, case .final(let weight, _, let fat)? = YunmaiFrame(parsing: value),
              weight > 0 else { return [] }
        return [.reading(WeightReading(kilograms: Double(weight) / 100, stable: true, displayUnit: displayUnit,
                                       bodyFatPercent: fat.map { Double($0) / 100 }))]
    }
}
