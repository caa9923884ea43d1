import HAL
import Transports

/// The Beurer / Sanitas opening (init, time, status, unit) and the weight-only frames, as a
/// value. Sources: see `BeurerSanitasFrame`.
public struct BeurerSanitasScaleProtocol: VendorScaleProtocol {
    public static let service = BluetoothUUID(0xFFE0)
    public static let characteristic = BluetoothUUID(0xFFE1)

    public enum Phase: Hashable, Sendable { case initialising, status, unit, ready }

    public var startByte: UInt8
    /// The unit to set, or nil to leave the scale as its owner set it: these scales weigh in
    /// 50 g units whatever they show, so nothing needs changing to read them.
    public var wantedUnit: WeightUnit?
    public var unixSeconds: @Sendable () -> Int64
    public private(set) var phase = Phase.initialising
    public private(set) var battery: UInt8?
    /// What the scale shows, from its status (or the unit set).
    public private(set) var displayUnit = WeightUnit.kilograms

    public init(startByte: UInt8, wantedUnit: WeightUnit? = nil, unixSeconds: @escaping @Sendable () -> Int64) {
        self.startByte = startByte
        self.wantedUnit = wantedUnit.map { $0 == .pounds ? .pounds : .kilograms }
        self.unixSeconds = unixSeconds
    }

    /// The status's unit code as a HAL unit: 1 kg, 2 lb, 4 stones (shown as stones and pounds,
    /// so pounds is the nearest HAL has).
    static func unit(code: UInt8) -> WeightUnit { code == 1 ? .kilograms : .pounds }

    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.characteristic) else { throw .unsupported("the Beurer / Sanitas characteristic FFE1") }
        return [Self.characteristic]
    }

    public var awaiting: String {
        switch phase {
        case .initialising: "the scale's answer to init"
        case .status: "the scale's status"
        case .unit: "the scale's acknowledgement of the unit"
        case .ready: "nothing"
        }
    }

    public mutating func start() -> [VendorScaleAction] {
        [write(BeurerSanitasFrame.initialise(startByte: startByte), "init")]
    }

    private func write(_ value: [UInt8], _ purpose: String) -> VendorScaleAction {
        .write(Self.characteristic, value, withResponse: true, purpose: purpose)
    }

    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.characteristic, let frame = BeurerSanitasFrame(parsing: value, startByte: startByte) else { return [] }
        switch (frame, phase) {
        case (.initAcknowledged, .initialising):
            phase = .status
            return [write(BeurerSanitasFrame.setTime(startByte: startByte, unixSeconds: unixSeconds()), "the time"),
                    write(BeurerSanitasFrame.status(startByte: startByte), "the status request (4F)")]
        case (.statusAcknowledged(let battery, let unit), .status):
            self.battery = battery
            displayUnit = Self.unit(code: unit)
            if let wantedUnit, unit != BeurerSanitasFrame.unitCode(wantedUnit) {
                phase = .unit
                return [write(BeurerSanitasFrame.setUnit(startByte: startByte, wantedUnit), "the unit (4D)")]
            }
            phase = .ready
            return [.ready]
        case (.unitAcknowledged(let accepted), .unit):
            guard accepted else { return [.fail(.handshakeFailed("the scale did not take the unit (4D); set it on the scale itself"))] }
            displayUnit = wantedUnit ?? displayUnit
            phase = .ready
            return [.ready]
        case (.weight(let fiftyGrams, let stable), .ready):
            guard fiftyGrams > 0 else { return [] }
            // Grams first, then kilograms: 1447 × 0.05 is 72.35000000000001, 72350 / 1000 is 72.35.
            return [.reading(WeightReading(kilograms: Double(fiftyGrams) * 50 / 1000, stable: stable, displayUnit: displayUnit))]
        default:
            return []
        }
    }
}
