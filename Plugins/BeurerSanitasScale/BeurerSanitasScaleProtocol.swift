import HAL
import Transports

/// The Beurer / Sanitas opening (init, time, status, unit) and the weight-only frames, as a
/// value. Sources: see `BeurerSanitasFrame`.
public struct BeurerSanitasScaleProtocol: VendorScaleProtocol {
    /// The legacy protocol's service; QN and Yunmai use FFE0 too, so the driver matches by name.
    public static let service = BluetoothUUID(0xFFE0)
    /// The one characteristic, both written (with response) and notified.
    public static let characteristic = BluetoothUUID(0xFFE1)

    /// Where the opening stands; weight frames are read only once it is `.ready`.
    public enum Phase: Hashable, Sendable {
        /// The init command is sent; waiting for the scale's answer.
        case initialising
        /// Asked for the scale's status (its unit among it).
        case status
        /// Setting the display unit that was asked for.
        case unit
        /// Opening done: weight frames are read from here on.
        case ready
    }

    /// 0xF7 or 0xE7 by model (see `BeurerSanitasScaleDriver.startByte(forName:)`); every frame starts with it.
    public var startByte: UInt8
    /// The unit to set, or nil to leave the scale as its owner set it: these scales weigh in
    /// 50 g units whatever they show, so nothing needs changing to read them.
    public var wantedUnit: WeightUnit?
    /// Now, as Unix seconds, for the time command (injected so tests are repeatable).
    public var unixSeconds: @Sendable () -> Int64
    /// The current step of the opening.
    public private(set) var phase = Phase.initialising
    /// Battery byte from the status acknowledgement, passed on as received; nil before the status arrives.
    public private(set) var battery: UInt8?
    /// What the scale shows, from its status (or the unit set).
    public private(set) var displayUnit = WeightUnit.kilograms

    /// A stone `wantedUnit` becomes kilograms; `unixSeconds` is read when the init answer arrives.
    public init(startByte: UInt8, wantedUnit: WeightUnit? = nil, unixSeconds: @escaping @Sendable () -> Int64) {
        self.startByte = startByte
        self.wantedUnit = wantedUnit.map { $0 == .pounds ? .pounds : .kilograms }
        self.unixSeconds = unixSeconds
    }

    /// The status's unit code as a HAL unit: 1 kg, 2 lb, 4 stones (shown as stones and pounds,
    /// so pounds is the nearest HAL has).
    static func unit(code: UInt8) -> WeightUnit { code == 1 ? .kilograms : .pounds }

    /// Subscribes to FFE1; throws `.unsupported` when the scale lacks it.
    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        guard available.contains(Self.characteristic) else { throw .unsupported("the Beurer / Sanitas characteristic FFE1") }
        return [Self.characteristic]
    }

    /// Named in the timeout error: what the current phase is waiting for.
    public var awaiting: String {
        switch phase {
        case .initialising: "the scale's answer to init"
        case .status: "the scale's status"
        case .unit: "the scale's acknowledgement of the unit"
        case .ready: "nothing"
        }
    }

    /// Sends only init; the rest of the opening follows the scale's answers.
    public mutating func start() -> [VendorScaleAction] {
        [write(BeurerSanitasFrame.initialise(startByte: startByte), "init")]
    }

    private func write(_ value: [UInt8], _ purpose: String) -> VendorScaleAction {
        .write(Self.characteristic, value, withResponse: true, purpose: purpose)
    }

    /// Steps through init, status and unit; once ready, weight frames above zero become readings.
    /// A refused unit fails the handshake.
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
