import HAL

/// Bit 0 of both measurement flags: which units every mass and length field uses.
public enum UnitSystem: Hashable, Sendable {
    /// Mass in units of 0.005 kg, height in units of 0.001 m.
    case si
    /// Mass in units of 0.01 lb, height in units of 0.1 in.
    case imperial

    init(flagBit: Bool) { self = flagBit ? .imperial : .si }

    static let kilogramsPerPound = 0.45359237
    static let metresPerInch = 0.0254

    /// A raw mass field (weight, muscle mass, fat free mass, soft lean mass, body water mass) in kilograms.
    func kilograms(raw: UInt16) -> Double {
        switch self {
        case .si: Double(raw) * 0.005
        case .imperial: Double(raw) * 0.01 * Self.kilogramsPerPound
        }
    }

    /// A raw height field in metres.
    func metres(raw: UInt16) -> Double {
        switch self {
        case .si: Double(raw) * 0.001
        case .imperial: Double(raw) * 0.1 * Self.metresPerInch
        }
    }

    /// The unit a person sees on the scale.
    var displayUnit: WeightUnit { self == .si ? .kilograms : .pounds }
}

/// The Date Time characteristic's fields as sent (zero means "not known" for year, month, day).
public struct BluetoothDateTime: Hashable, Sendable {
    /// Year as sent (little-endian u16), or 0 when the scale does not know it.
    public var year: UInt16
    /// Month 1–12, or 0 when not known.
    public var month: UInt8
    /// Day of the month 1–31, or 0 when not known.
    public var day: UInt8
    /// Hours since midnight, 0–23.
    public var hours: UInt8
    /// Minutes past the hour, 0–59.
    public var minutes: UInt8
    /// Seconds past the minute, 0–59.
    public var seconds: UInt8

    /// Memberwise initialiser; values are stored as given, not range-checked.
    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }
}
