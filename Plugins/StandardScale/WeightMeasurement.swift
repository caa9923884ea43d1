import HAL

/// One Weight Measurement value (characteristic 0x2A9D of the Weight Scale Service 0x181D).
///
/// Layout (WSS 1.0 §3.2 and the GATT Specification Supplement, "Weight Measurement"), little-endian:
/// flags u8 | weight u16 | [time stamp, 7 bytes] | [user ID u8] | [BMI u16, height u16].
/// Flags: bit 0 units (0 SI, 1 imperial), bit 1 time stamp present, bit 2 user ID present,
/// bit 3 BMI and height present; bits 4–7 are reserved and ignored.
public struct WeightMeasurement: Hashable, Sendable {
    /// The flags byte (byte 0): which units the value uses and which optional fields follow the weight.
    public struct Flags: OptionSet, Hashable, Sendable {
        /// The flags byte exactly as received, reserved bits 4–7 included.
        public let rawValue: UInt8
        /// Wraps a flags byte as is; reserved bits are kept, not rejected.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Bit 0: weight in 0.01 lb and height in 0.1 in instead of 0.005 kg and 0.001 m.
        public static let imperialUnits = Flags(rawValue: 1 << 0)
        /// Bit 1: a 7-byte Date Time follows the weight.
        public static let timeStampPresent = Flags(rawValue: 1 << 1)
        /// Bit 2: a one-byte user ID follows (after the time stamp, if any).
        public static let userIDPresent = Flags(rawValue: 1 << 2)
        /// Bit 3: BMI (0.1 kg/m²) and height fields close the value.
        public static let bmiAndHeightPresent = Flags(rawValue: 1 << 3)
    }

    /// The weight field's special value: the scale tried and could not measure.
    public static let unsuccessful: UInt16 = 0xFFFF

    /// The flags as received; callers check them to tell which optional fields were sent.
    public var flags: Flags
    /// The unit system from flag bit 0; fixes how `rawWeight` and the height are scaled.
    public var units: UnitSystem
    /// The weight as sent, in 0.005 kg (SI) or 0.01 lb (imperial) steps.
    public var rawWeight: UInt16
    /// When the scale took the measurement, if it sent a time stamp (flag bit 1).
    public var timeStamp: BluetoothDateTime?
    /// 0xFF means an unknown user.
    public var userID: UInt8?
    /// kg/m², resolution 0.1.
    public var bmi: Double?
    /// Height in metres (converted from 0.1 in when imperial), present only with flag bit 3.
    public var heightMetres: Double?

    /// False when the scale reported "measurement unsuccessful".
    public var isSuccessful: Bool { rawWeight != Self.unsuccessful }

    /// The weight in kilograms (pounds converted), or nil when unsuccessful.
    public var kilograms: Double? { isSuccessful ? units.kilograms(raw: rawWeight) : nil }

    /// Decodes one characteristic value; throws when it is shorter than its flags announce.
    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        flags = Flags(rawValue: try reader.u8("the flags"))
        units = UnitSystem(flagBit: flags.contains(.imperialUnits))
        rawWeight = try reader.u16("the weight")
        if flags.contains(.timeStampPresent) { timeStamp = try reader.dateTime("the time stamp") }
        if flags.contains(.userIDPresent) { userID = try reader.u8("the user ID") }
        if flags.contains(.bmiAndHeightPresent) {
            bmi = Double(try reader.u16("the BMI")) * 0.1
            heightMetres = units.metres(raw: try reader.u16("the height"))
        }
        // Bytes after the announced fields are left for future versions of the characteristic.
    }

    /// The HAL reading for a Weight Measurement value: nil when the scale reports "measurement
    /// unsuccessful"; throws when the value is too short for its flags. The standard has no
    /// stable flag, so `stable` is nil (the CLI counts two consecutive equal readings instead).
    public static func parse(_ bytes: [UInt8]) throws(StandardScaleParseError) -> WeightReading? {
        try WeightMeasurement(parsing: bytes).reading
    }

    /// The value as a HAL weight reading, in kg with the unit the scale displays; nil when unsuccessful.
    public var reading: WeightReading? {
        guard let kilograms else { return nil }
        return WeightReading(kilograms: kilograms, stable: nil, displayUnit: units.displayUnit)
    }
}
